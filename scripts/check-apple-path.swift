// What each platform builds, read from the manifests as SwiftPM reads them (`swift package dump-package`), without an
// Apple SDK: `make vendored-check` runs it.
//
//     swift scripts/check-apple-path.swift <root dump-package JSON> <Tests/Vendored dump-package JSON>
//
// For every Apple platform (with the default traits, and with none: Xcode sets no trait of a dependency), the targets
// the products an app would use reach must include the vendored LMDB and libsodium and no system library but SQLite's
// (the SDKs have sqlite3). On Linux the default traits must reach the system libraries and no vendored code, and
// `VendoredLibraries` alone the reverse. The vendored targets' settings in Tests/Vendored must be the root's.
import Foundation

struct Failure: Error, CustomStringConvertible { let description: String }

let applePlatforms = ["macos", "maccatalyst", "ios", "tvos", "watchos", "visionos"]
let appProducts = [
    "PersistenceCore", "PersistenceSQLite", "PersistenceLMDB", "PersistencePostgres", "PersistenceSync",
    "PersistenceSyncHTTP", "PersistenceMacros",
]

func load(_ path: String) throws -> [String: Any] {
    let data = try Data(contentsOf: URL(fileURLWithPath: path))
    guard let object = try JSONSerialization.jsonObject(with: data) as? [String: Any] else {
        throw Failure(description: "\(path) is not a dump-package object")
    }
    return object
}

func targets(_ manifest: [String: Any]) -> [String: [String: Any]] {
    let list = manifest["targets"] as? [[String: Any]] ?? []
    return Dictionary(list.compactMap { target in (target["name"] as? String).map { ($0, target) } }) { a, _ in a }
}

/// The package's own targets `target` depends on for this platform and these enabled traits.
func dependencies(of target: [String: Any], platform: String, traits: Set<String>) -> [String] {
    let list = target["dependencies"] as? [[String: Any]] ?? []
    return list.compactMap { dependency in
        guard let entry = (dependency["target"] ?? dependency["byName"]) as? [Any],
            let name = entry.first as? String
        else { return nil }  // products of other packages
        if let condition = entry.dropFirst().first as? [String: Any] {
            let platforms = condition["platformNames"] as? [String] ?? []
            if !platforms.isEmpty, !platforms.contains(platform) { return nil }
            if let needed = condition["traits"] as? [String], traits.isDisjoint(with: needed) { return nil }
        }
        return name
    }
}

func reachable(from roots: [String], in all: [String: [String: Any]], platform: String, traits: Set<String>) -> Set<
    String
> {
    var seen = Set<String>()
    var stack = roots
    while let name = stack.popLast() {
        guard seen.insert(name).inserted, let target = all[name] else { continue }
        stack += dependencies(of: target, platform: platform, traits: traits)
    }
    return seen.filter { all[$0] != nil }
}

func productTargets(_ manifest: [String: Any], _ names: [String]) -> [String] {
    let products = manifest["products"] as? [[String: Any]] ?? []
    return products.filter { names.contains($0["name"] as? String ?? "") }.flatMap { $0["targets"] as? [String] ?? [] }
}

func systemTargets(_ names: Set<String>, _ all: [String: [String: Any]]) -> Set<String> {
    names.filter { all[$0]?["type"] as? String == "system" }
}

func check() throws {
    let arguments = CommandLine.arguments
    guard arguments.count == 3 else {
        throw Failure(description: "usage: check-apple-path.swift root.json vendored.json")
    }
    let root = try load(arguments[1])
    let vendored = try load(arguments[2])
    let all = targets(root)
    let appRoots = productTargets(root, appProducts)
    let lmdbRoots = productTargets(root, ["PersistenceLMDB"])
    let vendoredTargets: Set = ["CLMDBVendored", "CSodiumVendored"]

    for platform in applePlatforms {
        for traits in [Set(["SystemLibraries"]), Set<String>()] {
            let reached = reachable(from: appRoots, in: all, platform: platform, traits: traits)
            let system = systemTargets(reached, all)
            guard system == ["CSQLite"] else {
                throw Failure(
                    description: "\(platform), traits \(traits.sorted()): system libraries \(system.sorted())")
            }
            guard vendoredTargets.isSubset(of: reached) else {
                throw Failure(description: "\(platform), traits \(traits.sorted()): the vendored targets aren't built")
            }
        }
    }
    print("apple-path: \(applePlatforms.joined(separator: ", ")): products \(appProducts.joined(separator: ", "))")
    print("apple-path:   reach the vendored LMDB and libsodium and no system library but CSQLite (SDK sqlite3),")
    print("apple-path:   with the default traits and with none")

    let linuxDefault = reachable(from: lmdbRoots, in: all, platform: "linux", traits: ["SystemLibraries"])
    guard systemTargets(linuxDefault, all) == ["CLMDBSystem", "CSodiumSystem"],
        linuxDefault.isDisjoint(with: vendoredTargets)
    else { throw Failure(description: "linux, default traits: \(linuxDefault.sorted())") }
    let linuxVendored = reachable(from: lmdbRoots, in: all, platform: "linux", traits: ["VendoredLibraries"])
    guard systemTargets(linuxVendored, all).isEmpty, vendoredTargets.isSubset(of: linuxVendored) else {
        throw Failure(description: "linux, VendoredLibraries: \(linuxVendored.sorted())")
    }
    print("apple-path: linux: default traits reach CLMDBSystem and CSodiumSystem only; VendoredLibraries the vendored")

    let copies = targets(vendored)
    for name in vendoredTargets.sorted() {
        guard let ours = all[name], let theirs = copies[name] else { throw Failure(description: "no target \(name)") }
        for key in ["settings", "exclude", "dependencies"] {
            let a = try JSONSerialization.data(withJSONObject: ours[key] ?? [], options: .sortedKeys)
            let b = try JSONSerialization.data(withJSONObject: theirs[key] ?? [], options: .sortedKeys)
            guard a == b else { throw Failure(description: "Tests/Vendored's \(name) \(key) differ from the root's") }
        }
    }
    print("apple-path: Tests/Vendored's vendored targets have the root's settings")
}

do {
    try check()
} catch {
    FileHandle.standardError.write(Data("error: apple-path: \(error)\n".utf8))
    exit(1)
}
