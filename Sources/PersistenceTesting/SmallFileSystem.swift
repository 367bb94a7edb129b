package import Foundation

/// A small file system of its own (a size-limited `tmpfs`), to check what a backend does when the disk fills up.
///
/// Mounting needs Linux and root (as in CI and the project's containers); elsewhere ``isAvailable`` is `false` and
/// checks that need one do nothing there.
package enum SmallFileSystem {
    /// Whether this process can mount one.
    package static let isAvailable: Bool = {
        #if os(Linux)
            return geteuid() == 0 && FileManager.default.isExecutableFile(atPath: "/bin/mount")
        #else
            return false
        #endif
    }()

    /// Mounts a fresh file system of `bytes` bytes and returns its root; ``unmount(_:)`` removes it.
    package static func mount(bytes: Int) throws -> URL {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("persistence-small-fs-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        do {
            try run("/bin/mount", ["-t", "tmpfs", "-o", "size=\(bytes)", "tmpfs", directory.path])
        } catch {
            try? FileManager.default.removeItem(at: directory)
            throw error
        }
        return directory
    }

    /// Unmounts a file system made by ``mount(bytes:)`` and removes its mount point.
    package static func unmount(_ directory: URL) {
        try? run("/bin/umount", [directory.path])
        try? FileManager.default.removeItem(at: directory)
    }

    private static func run(_ tool: String, _ arguments: [String]) throws {
        #if os(Linux) || os(macOS)
            try runProcess(tool, arguments)
        #else
            // iOS-family systems have no `Process`: nothing is mounted there (``isAvailable`` is `false`).
            throw CocoaError(.featureUnsupported, userInfo: [NSLocalizedDescriptionKey: "\(tool) can't run here"])
        #endif
    }

    #if os(Linux) || os(macOS)
        private static func runProcess(_ tool: String, _ arguments: [String]) throws {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: tool)
            process.arguments = arguments
            try process.run()
            process.waitUntilExit()
            guard process.terminationStatus == 0 else {
                throw CocoaError(.fileWriteUnknown, userInfo: [NSLocalizedDescriptionKey: "\(tool) failed"])
            }
        }
    #endif
}
