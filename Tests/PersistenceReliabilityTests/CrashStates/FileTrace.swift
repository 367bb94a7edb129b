import Foundation

/// A trace recorded by `Tests/CrashStates/crashtrace.c` (an `LD_PRELOAD` library): every operation of a process that
/// changed a file under one directory, in the order the kernel applied them, with the process's standard output in
/// its place among them.
struct FileTrace {
    enum Kind: UInt32 {
        case open = 1
        case write, truncate, sync, rename, link, unlink, makeDirectory, removeDirectory, output, mapped,
            allocate
    }

    struct Flags: OptionSet {
        let rawValue: UInt32
        /// An open that created the file.
        static let created = Flags(rawValue: 1)
        static let truncated = Flags(rawValue: 2)
        /// A write through a descriptor opened with `O_SYNC`/`O_DSYNC`: durable when it returned.
        static let synchronous = Flags(rawValue: 4)
        static let directory = Flags(rawValue: 8)
        /// `fdatasync`.
        static let dataOnly = Flags(rawValue: 16)
    }

    struct Operation {
        var kind: Kind
        var result: Int64
        var flags: Flags
        var offset: Int64
        var length: Int64
        /// Relative to the traced directory ("." is the directory itself; "" in a sync: every file).
        var path: String
        /// A rename's or link's new name.
        var target: String
        var data: Data
    }

    struct Malformed: Error, CustomStringConvertible {
        let at: Int
        var description: String { "the trace is malformed at byte \(at)" }
    }

    var operations: [Operation]

    init(operations: [Operation]) { self.operations = operations }

    init(contentsOf url: URL) throws {
        let bytes = try Data(contentsOf: url)
        var operations: [Operation] = []
        var at = bytes.startIndex
        func take(_ count: Int) throws -> Data {
            guard count >= 0, bytes.endIndex - at >= count else { throw Malformed(at: at - bytes.startIndex) }
            defer { at += count }
            return bytes[at..<(at + count)]
        }
        func integer<T: FixedWidthInteger>(_: T.Type) throws -> T {
            var value = T.zero
            for (index, byte) in try take(MemoryLayout<T>.size).enumerated() { value |= T(byte) << (index * 8) }
            return value
        }
        func string() throws -> String {
            let data = try take(Int(try integer(UInt32.self)))
            guard let text = String(data: data, encoding: .utf8) else { throw Malformed(at: at - bytes.startIndex) }
            return text
        }
        while at < bytes.endIndex {
            let start = at - bytes.startIndex
            guard let kind = Kind(rawValue: try integer(UInt32.self)) else { throw Malformed(at: start) }
            let result = try integer(Int64.self)
            let flags = Flags(rawValue: try integer(UInt32.self))
            let offset = try integer(Int64.self)
            let length = try integer(Int64.self)
            let path = try string()
            let target = try string()
            let count = try integer(UInt64.self)
            guard count <= UInt64(Int.max) else { throw Malformed(at: start) }
            let data = Data(try take(Int(count)))
            operations.append(
                Operation(
                    kind: kind, result: result, flags: flags, offset: offset, length: length, path: path,
                    target: target, data: data))
        }
        self.operations = operations
    }

    /// Compiles the tracing library into `directory` with the toolchain's C compiler; its path.
    static func buildLibrary(into directory: URL) throws -> URL {
        let source = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("CrashStates/crashtrace.c")
        let library = directory.appendingPathComponent("libcrashtrace.so")
        let compiler = Process()
        compiler.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        compiler.arguments = [
            "clang", "-shared", "-fPIC", "-O2", "-Wall", "-Werror", "-o", library.path, source.path, "-ldl",
            "-lpthread",
        ]
        try compiler.run()
        compiler.waitUntilExit()
        guard compiler.terminationStatus == 0 else {
            throw CompileFailed(status: compiler.terminationStatus)
        }
        return library
    }

    struct CompileFailed: Error, CustomStringConvertible {
        let status: Int32
        var description: String { "clang could not build Tests/CrashStates/crashtrace.c (status \(status))" }
    }

    /// The environment that makes a child process record its trace of `directory` into `log`.
    static func environment(library: URL, directory: URL, log: URL) -> [String: String] {
        ["LD_PRELOAD": library.path, "CRASHTRACE_DIR": directory.path, "CRASHTRACE_LOG": log.path]
    }
}

/// What a power cut right after each acknowledgement could still lose, in a model of the file system: the changes
/// before it that no sync had made durable yet.
///
/// Two models. **POSIX**: a file's data is durable once the file is synced (`fsync`/`fdatasync`, or written through
/// an `O_SYNC`/`O_DSYNC` descriptor); a name (creating, renaming, linking, unlinking a file; making a directory) once
/// its directory is synced. **ext4 (`data=ordered`, the default)**: data as in POSIX; names go through the one
/// journal in order, and any sync commits it, so a name is durable once anything is synced after it. ext4 is what
/// Debian and most Linux machines run; POSIX is what a library can count on everywhere (and what other file systems
/// — XFS and Btrfs among them — give in some cases only).
struct UnsyncedChanges {
    enum Model { case posix, ext4Ordered }

    /// A change an acknowledgement depended on that could be lost.
    struct Exposure: CustomStringConvertible {
        /// The acknowledgement's text.
        var acknowledgement: String
        /// The index of the change in the trace, its kind and path.
        var change: Int
        var kind: FileTrace.Kind
        var path: String
        var description: String { "'\(acknowledgement)' follows an unsynced \(kind) of \(path) (#\(change))" }
    }

    /// The exposures at each output line that `isAcknowledgement` accepts; changes of paths `ignoring` accepts (files
    /// the store rebuilds, as SQLite's `-shm` and LMDB's lock file) never count.
    static func exposures(
        in trace: FileTrace, model: Model, isAcknowledgement: (String) -> Bool, ignoring: (String) -> Bool
    ) -> [Exposure] {
        // Unsynced data, by file (a path until renamed); unsynced names, by directory.
        var data: [String: [Int]] = [:]
        var names: [String: [Int]] = [:]
        var exposures: [Exposure] = []
        var output = ""
        func parent(_ path: String) -> String {
            guard let slash = path.lastIndex(of: "/") else { return "." }
            return String(path[..<slash])
        }
        func named(_ index: Int, in path: String) {
            guard !path.isEmpty, !ignoring(path) else { return }
            names[parent(path), default: []].append(index)
        }
        for (index, operation) in trace.operations.enumerated() {
            switch operation.kind {
            case .open:
                if operation.flags.contains(.created) { named(index, in: operation.path) }
                if operation.flags.contains(.truncated), !ignoring(operation.path) {
                    data[operation.path, default: []].append(index)
                }
            case .write, .truncate, .allocate:
                guard !ignoring(operation.path), !operation.flags.contains(.synchronous) else { continue }
                data[operation.path, default: []].append(index)
            case .sync:
                if operation.path.isEmpty {
                    data = [:]
                    names = [:]
                    continue
                }
                data[operation.path] = nil
                // A directory's sync makes its names durable; on ext4 any sync commits the journal, every name.
                names[operation.path] = nil
                if model == .ext4Ordered { names = [:] }
            case .rename:
                if !operation.path.isEmpty { data[operation.target] = data.removeValue(forKey: operation.path) }
                named(index, in: operation.path)
                named(index, in: operation.target)
            case .link:
                named(index, in: operation.target)
            case .unlink:
                // The file's data goes with its last name (hard links aside: the library's are followed by an
                // unlink of the temporary name, which leaves the data with the new one).
                data[operation.path] = nil
                named(index, in: operation.path)
            case .makeDirectory, .removeDirectory:
                named(index, in: operation.path)
            case .mapped:
                continue
            case .output:
                output += String(decoding: operation.data, as: UTF8.self)
                while let newline = output.firstIndex(of: "\n") {
                    let line = String(output[..<newline])
                    output.removeSubrange(...newline)
                    guard isAcknowledgement(line) else { continue }
                    let trace = trace.operations
                    for (_, changes) in data {
                        for change in changes {
                            exposures.append(
                                Exposure(
                                    acknowledgement: line, change: change, kind: trace[change].kind,
                                    path: trace[change].path))
                        }
                    }
                    for (_, changes) in names {
                        for change in changes {
                            exposures.append(
                                Exposure(
                                    acknowledgement: line, change: change, kind: trace[change].kind,
                                    path: trace[change].kind == .rename && !trace[change].target.isEmpty
                                        ? trace[change].target : trace[change].path))
                        }
                    }
                }
            }
        }
        return exposures
    }
}
