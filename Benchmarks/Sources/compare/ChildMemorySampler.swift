import Foundation
import Synchronization
import Workloads

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Samples a child process's `VmHWM`, `RssAnon` and `RssFile` every 10 ms on a thread of its own until stopped —
/// and those of the processes it starts in turn (`persistence verify` checks in a child of its own), found every
/// 100 ms by the parent field of `/proc/<pid>/stat` (this kernel has no `/proc/<pid>/task/<tid>/children`). Each
/// figure is the highest of any one of these processes, as `ru_maxrss` counts a process and its descendants.
/// Linux only; elsewhere every figure stays 0.
final class ChildMemorySampler: Sendable {
    /// The highest figures sampled so far, in KiB.
    struct Peaks {
        var peakKiB = 0
        var anonymousKiB = 0
        var fileKiB = 0
    }

    private struct State {
        var stopped = false
        var peaks = Peaks()
    }

    private let state = Mutex(State())
    private let done = DispatchSemaphore(value: 0)

    init(processID: pid_t) {
        guard MemoryProbe.isAvailable else {
            done.signal()
            return
        }
        let thread = Thread { [self] in
            var probes = [processID: MemoryProbe(processID: processID)]
            var tick = 0
            while true {
                if tick % 10 == 9 {
                    for descendant in Self.descendants(of: processID) where probes[descendant] == nil {
                        probes[descendant] = MemoryProbe(processID: descendant)
                    }
                }
                tick += 1
                var samples: [MemoryProbe.Sample] = []
                for pid in Array(probes.keys) {
                    samples.append(probes[pid, default: MemoryProbe(processID: pid)].sample())
                }
                let stopped = state.withLock { state in
                    for sample in samples {
                        state.peaks.peakKiB = max(state.peaks.peakKiB, sample.peakKiB)
                        state.peaks.anonymousKiB = max(state.peaks.anonymousKiB, sample.anonymousKiB)
                        state.peaks.fileKiB = max(state.peaks.fileKiB, sample.fileKiB)
                    }
                    return state.stopped
                }
                if stopped { break }
                usleep(10_000)
            }
            done.signal()
        }
        thread.start()
    }

    /// Stops sampling (the child has been reaped: its `/proc` entry is gone) and returns the peaks seen.
    @discardableResult
    func stop() -> Peaks {
        state.withLock { $0.stopped = true }
        done.wait()
        return state.withLock { $0.peaks }
    }

    /// The processes `root` started, and theirs, alive now.
    private static func descendants(of root: pid_t) -> [pid_t] {
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc") else { return [] }
        var children: [pid_t: [pid_t]] = [:]
        for entry in entries {
            guard let pid = pid_t(entry), let parent = parent(of: pid) else { continue }
            children[parent, default: []].append(pid)
        }
        var found: [pid_t] = []
        var pending = children[root] ?? []
        while let pid = pending.popLast() {
            found.append(pid)
            pending += children[pid] ?? []
        }
        return found
    }

    /// The parent's id from `/proc/<pid>/stat`: `pid (comm) state ppid …`, the command name in parentheses possibly
    /// holding spaces and parentheses itself, hence read after the last `)`.
    private static func parent(of pid: pid_t) -> pid_t? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let end = stat.lastIndex(of: ")")
        else { return nil }
        let fields = stat[stat.index(after: end)...].split(separator: " ")
        return fields.count > 1 ? pid_t(fields[1]) : nil
    }
}
