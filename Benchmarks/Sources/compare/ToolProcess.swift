import Foundation
import Synchronization
import Workloads

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Runs the `persistence` binary as a user's shell would — a process of its own, standard input from `/dev/null`
/// (so it never waits on a prompt) — and reports how long it took and the most memory it held.
///
/// Started with `posix_spawn` and reaped with `wait4`, because Foundation's `Process` doesn't hand over the child's
/// `rusage`. Its `ru_maxrss` is not the child's alone, though: glibc's `posix_spawn` runs the child in this
/// process's memory until `exec` (`CLONE_VM | CLONE_VFORK`), and at `exec` Linux folds the high-water mark of the
/// memory it leaves into the child's `maxrss` — so a child never reports less than this process's peak. Hence, on
/// Linux: this process's peak is reset to its current size (`/proc/self/clear_refs`) just before each spawn and
/// read; a `ru_maxrss` above it is the child's own peak, exactly. Otherwise the child stayed below this process's
/// size, and its peak is the last `VmHWM` of its `/proc/<pid>/status` — the high-water mark of its own memory after
/// `exec` — which ``ChildMemorySampler`` reads every 10 ms while it runs, with `RssAnon` and `RssFile`, its own
/// children's included (a rise in its last 10 ms can be missed).
struct ToolProcess {
    let binary: URL
    /// Added to the child's environment: the passphrase variable the tool's `--passphrase-env` names.
    let environment: [String: String]
    /// Where the child's standard output and error go (read back afterwards, then removed).
    let scratch: ScratchDirectory

    /// One finished run.
    struct Run {
        var arguments: [String]
        var seconds: Double
        var status: Int32
        var signaled: Bool
        var output: String
        var errors: String
        /// The child's peak resident size, in KiB, and where it comes from.
        var peakKiB: Int
        var peakSource: PeakSource
        /// The highest `RssAnon` and `RssFile` sampled, in KiB (0 where `/proc` has none).
        var anonymousPeakKiB: Int
        var filePeakKiB: Int

        var succeeded: Bool { !signaled && status == 0 }

        /// `exited with status 3: persistence: …` or `was killed by signal 9`.
        var failure: String {
            let how = signaled ? "was killed by signal \(status)" : "exited with status \(status)"
            let said = errors.trimmingCharacters(in: .whitespacesAndNewlines)
            return "`persistence \(arguments.joined(separator: " "))` \(how)" + (said.isEmpty ? "" : ": \(said)")
        }
    }

    /// Where a peak resident size comes from.
    enum PeakSource: String {
        /// `wait4`'s `ru_maxrss`, above this process's own size at the spawn: the child's peak as the kernel kept it.
        case rusage = "ru_maxrss"
        /// The child's last sampled `VmHWM`: it stayed below this process's size, which `ru_maxrss` also counts.
        case sampled = "VmHWM"
    }

    /// Runs the tool with `arguments` and waits for it.
    /// - Throws: ``Failure`` when it could not be started; a run that fails is returned, for the caller to judge.
    func run(_ arguments: [String]) throws -> Run {
        let folder = try scratch.fresh("tool-output")
        defer { try? FileManager.default.removeItem(at: folder) }
        let outputFile = folder.appendingPathComponent("stdout").path
        let errorFile = folder.appendingPathComponent("stderr").path

        #if os(Linux)
            var actions = posix_spawn_file_actions_t()
        #else
            var actions: posix_spawn_file_actions_t?
        #endif
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outputFile, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_addopen(&actions, 2, errorFile, O_WRONLY | O_CREAT | O_TRUNC, 0o644)

        var variables = ProcessInfo.processInfo.environment
        variables.merge(environment) { _, new in new }
        let argv = ([binary.path] + arguments).map { strdup($0) } + [nil]
        let envp = variables.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            for pointer in argv { free(pointer) }
            for pointer in envp { free(pointer) }
        }

        var ownProbe = MemoryProbe()
        let ownPeakKiB = MemoryProbe.resetPeak() ? ownProbe.sample().peakKiB : nil
        let clock = ContinuousClock()
        let start = clock.now
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, binary.path, &actions, nil, argv, envp)
        guard spawned == 0 else { throw Failure(message: "`\(binary.path)` could not be started (errno \(spawned))") }
        let sampler = ChildMemorySampler(processID: pid)
        var status: Int32 = 0
        var usage = rusage()
        while wait4(pid, &status, 0, &usage) < 0 {
            guard errno == EINTR else {
                sampler.stop()
                throw Failure(message: "waiting for `\(binary.path)` failed (errno \(errno))")
            }
        }
        let seconds = start.duration(to: clock.now).seconds
        let sampled = sampler.stop()

        #if os(Linux)
            let rusageKiB = Int(usage.ru_maxrss)  // kilobytes on Linux (getrusage(2))
        #else
            let rusageKiB = Int(usage.ru_maxrss) / 1024  // bytes on macOS
        #endif
        // A margin of 1 MiB for what this process may have grown between reading its peak and the child's `exec`.
        let exact = ownPeakKiB.map { rusageKiB > $0 + 1024 } ?? true
        // The low 7 bits: the signal that ended it, or 0 for an exit whose status is the next 8 (<sys/wait.h>).
        let terminatingSignal = status & 0x7F
        return Run(
            arguments: arguments, seconds: seconds,
            status: terminatingSignal == 0 ? (status >> 8) & 0xFF : terminatingSignal, signaled: terminatingSignal != 0,
            output: (try? String(contentsOfFile: outputFile, encoding: .utf8)) ?? "",
            errors: (try? String(contentsOfFile: errorFile, encoding: .utf8)) ?? "",
            peakKiB: exact ? rusageKiB : sampled.peakKiB, peakSource: exact ? .rusage : .sampled,
            anonymousPeakKiB: sampled.anonymousKiB, filePeakKiB: sampled.fileKiB)
    }

    struct Failure: Error, CustomStringConvertible {
        var message: String
        var description: String { message }
    }
}
