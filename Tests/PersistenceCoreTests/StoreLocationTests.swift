import Foundation
@_spi(PersistenceBackend) import PersistenceCore
@_spi(PersistenceBackend) import PersistenceEngine
import Testing

/// A directory of its own under the system's temporary directory, removed by ``remove()``.
struct StoreLocationScratch {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent(
            "StoreLocationTests-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    func remove() { try? FileManager.default.removeItem(at: url) }

    func contents() throws -> [String] { try FileManager.default.contentsOfDirectory(atPath: url.path) }
}

/// A name to validate, labelled for the report (some names are invisible or very long).
struct StoreLocationName: Sendable, CustomTestStringConvertible {
    var name: String
    var testDescription: String

    init(_ name: String, _ label: String? = nil) {
        self.name = name
        testDescription = label ?? "\"\(name)\""
    }
}

@Suite("Store location")
struct StoreLocationTests {
    static let invalidNames: [StoreLocationName] = [
        StoreLocationName("", "empty"),
        StoreLocationName("a/b"),
        StoreLocationName("/"),
        StoreLocationName("/absolute"),
        StoreLocationName(".."),
        StoreLocationName("a..b"),
        StoreLocationName("../x"),
        StoreLocationName("x/.."),
        StoreLocationName("a\\b", "a\\b"),
        StoreLocationName("\\", "backslash"),
        StoreLocationName("a\u{0}b", "a NUL b"),
        StoreLocationName("\u{0}", "NUL"),
        StoreLocationName("a\nb", "a newline b"),
        StoreLocationName("tab\t", "trailing tab"),
        StoreLocationName("\u{7F}", "DEL"),
        StoreLocationName(String(repeating: "a", count: 201), "201 ASCII bytes"),
        // 101 characters, 202 bytes: the limit counts bytes.
        StoreLocationName(String(repeating: "\u{E9}", count: 101), "101 × é (202 bytes)"),
        StoreLocationName("."),
    ]

    @Test("Unusable names are refused", arguments: invalidNames)
    func invalidName(_ test: StoreLocationName) {
        let error = #expect(throws: PersistenceError.self) { try StoreLocation.validate(name: test.name) }
        #expect(error?.code == .invalidName)
    }

    static let validNames: [StoreLocationName] = [
        StoreLocationName("App"),
        StoreLocationName("my-app_1"),
        StoreLocationName("Ünïcødé"),
        StoreLocationName("v1.2"),
        StoreLocationName("with space"),
        StoreLocationName("😀"),
        StoreLocationName(String(repeating: "a", count: 200), "200 ASCII bytes"),
        StoreLocationName(String(repeating: "\u{E9}", count: 100), "100 × é (200 bytes)"),
    ]

    @Test("Usable names are accepted", arguments: validNames)
    func validName(_ test: StoreLocationName) {
        #expect(throws: Never.self) { try StoreLocation.validate(name: test.name) }
    }

    @Test(
        "A path separator hidden behind a combining mark is refused",
        arguments: [
            StoreLocationName("a/\u{301}b", "a, slash + U+0301, b"),
            StoreLocationName("a\\\u{301}b", "a, backslash + U+0301, b"),
        ])
    func separatorWithCombiningMark(_ test: StoreLocationName) throws {
        // "/\u{301}" is one grapheme cluster, so String.contains("/") — which matches whole Characters — misses it,
        // yet the file name holds a real 0x2F byte: the store would be created in a subdirectory.
        #expect(test.name.utf8.contains(UInt8(ascii: "/")) || test.name.utf8.contains(UInt8(ascii: "\\")))
        let error = #expect(throws: PersistenceError.self) { try StoreLocation.validate(name: test.name) }
        #expect(error?.code == .invalidName)
    }

    @Test("An existing writable directory is accepted, and the probe leaves nothing behind")
    func writableDirectory() throws {
        let scratch = try StoreLocationScratch()
        defer { scratch.remove() }
        let location = try StoreLocation(name: "App", directory: scratch.url)
        #expect(location.name == "App")
        #expect(location.directory.standardizedFileURL.path == scratch.url.standardizedFileURL.path)
        #expect(location.file(extension: "sqlite").lastPathComponent == "App.sqlite")
        #expect(
            location.file(extension: "sqlite").deletingLastPathComponent().standardizedFileURL.path
                == scratch.url.standardizedFileURL.path)
        #expect(try scratch.contents().isEmpty)
    }

    @Test("The directory is standardized")
    func standardizedDirectory() throws {
        let scratch = try StoreLocationScratch()
        defer { scratch.remove() }
        let child = scratch.url.appendingPathComponent("child", isDirectory: true)
        try FileManager.default.createDirectory(at: child, withIntermediateDirectories: false)
        let roundabout = child.appendingPathComponent("..", isDirectory: true)
        let location = try StoreLocation(name: "Store", directory: roundabout)
        #expect(!location.directory.path.contains(".."))
        #expect(location.directory.path == scratch.url.standardizedFileURL.path)
    }

    @Test("A missing directory is not created")
    func missingDirectory() throws {
        let scratch = try StoreLocationScratch()
        defer { scratch.remove() }
        let missing = scratch.url.appendingPathComponent("missing/deeper", isDirectory: true)
        let error = #expect(throws: PersistenceError.self) { try StoreLocation(name: "App", directory: missing) }
        #expect(error?.code == .directoryNotFound)
        #expect(!FileManager.default.fileExists(atPath: missing.path))
        #expect(try scratch.contents().isEmpty)
    }

    @Test("A regular file is not a directory")
    func fileInsteadOfDirectory() throws {
        let scratch = try StoreLocationScratch()
        defer { scratch.remove() }
        let file = scratch.url.appendingPathComponent("plain.txt")
        try Data("x".utf8).write(to: file)
        let error = #expect(throws: PersistenceError.self) { try StoreLocation(name: "App", directory: file) }
        #expect(error?.code == .directoryNotFound)
        #expect(try Data(contentsOf: file) == Data("x".utf8))
    }

    @Test("The name is checked before the directory")
    func nameCheckedFirst() throws {
        let scratch = try StoreLocationScratch()
        defer { scratch.remove() }
        let missing = scratch.url.appendingPathComponent("missing", isDirectory: true)
        let error = #expect(throws: PersistenceError.self) { try StoreLocation(name: "../App", directory: missing) }
        #expect(error?.code == .invalidName)
    }

    /// `/proc/self`, when it exists and refuses new files. Tests may run as root, for whom permission bits don't
    /// apply; /proc refuses new files to everyone.
    static var refusingDirectory: URL? {
        let directory = URL(fileURLWithPath: "/proc/self", isDirectory: true)
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: directory.path, isDirectory: &isDirectory), isDirectory.boolValue
        else { return nil }
        let probe = directory.appendingPathComponent("persistence-tests-\(UUID().uuidString)")
        guard !FileManager.default.createFile(atPath: probe.path, contents: nil) else {
            try? FileManager.default.removeItem(at: probe)
            return nil
        }
        return directory
    }

    @Test(
        "A directory that can't be written is refused",
        .enabled(if: refusingDirectory != nil, "needs a directory that refuses new files, such as /proc/self"))
    func unwritableDirectory() throws {
        let directory = try #require(Self.refusingDirectory)
        let error = #expect(throws: PersistenceError.self) { try StoreLocation(name: "App", directory: directory) }
        #expect(error?.code == .permissionDenied)
    }

    @Test("Error messages name the directory, never anything else")
    func errorMessages() throws {
        let scratch = try StoreLocationScratch()
        defer { scratch.remove() }
        let missing = scratch.url.appendingPathComponent("missing", isDirectory: true)
        let error = #expect(throws: PersistenceError.self) { try StoreLocation(name: "App", directory: missing) }
        #expect(error.map { $0.message.contains(missing.lastPathComponent) } ?? false)
    }
}
