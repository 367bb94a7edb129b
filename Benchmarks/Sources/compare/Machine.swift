import Foundation

/// The machine a run happened on, for the report's header: ratios travel between machines, times don't.
struct Machine {
    var cpu: String
    var cores: Int
    var operatingSystem: String
    var swift: String

    static func current() -> Machine {
        Machine(
            cpu: cpuModel() ?? "unknown CPU",
            cores: ProcessInfo.processInfo.activeProcessorCount,
            operatingSystem: operatingSystem(),
            swift: swiftVersion() ?? "unknown")
    }

    var description: String {
        "\(cpu), \(cores) cores · \(operatingSystem) · \(swift)"
    }

    private static func cpuModel() -> String? {
        #if os(Linux)
            guard let info = try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8) else { return nil }
            for line in info.split(separator: "\n") where line.hasPrefix("model name") {
                return line.split(separator: ":", maxSplits: 1).last?.trimmingCharacters(in: .whitespaces)
            }
            return nil
        #else
            return run("/usr/sbin/sysctl", ["-n", "machdep.cpu.brand_string"])
        #endif
    }

    private static func operatingSystem() -> String {
        var kernel = utsname()
        uname(&kernel)
        let system = withUnsafeBytes(of: &kernel.sysname) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        let release = withUnsafeBytes(of: &kernel.release) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        #if os(Linux)
            if let osRelease = try? String(contentsOfFile: "/etc/os-release", encoding: .utf8),
                let line = osRelease.split(separator: "\n").first(where: { $0.hasPrefix("PRETTY_NAME=") })
            {
                let name = line.dropFirst("PRETTY_NAME=".count).trimmingCharacters(in: CharacterSet(charactersIn: "\""))
                return "\(name), \(system) \(release)"
            }
        #endif
        return "\(system) \(release)"
    }

    /// The first line of `swift --version`, from the toolchain on `PATH` (the one `make` builds with).
    private static func swiftVersion() -> String? {
        run("/usr/bin/env", ["swift", "--version"])?.split(separator: "\n").first.map(String.init)
    }

    private static func run(_ executable: String, _ arguments: [String]) -> String? {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        do { try process.run() } catch { return nil }
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { return nil }
        return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
