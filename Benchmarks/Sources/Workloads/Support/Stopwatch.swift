import CallgrindMarkers
import Synchronization

/// Times one operation with the monotonic clock — and, under callgrind (`make instructions`), counts its
/// instructions under the label of what is being measured (``InstructionLabel``).
enum Stopwatch {
    /// How deep in timed operations the current one is: only the outermost is marked for callgrind.
    private static let depth = Atomic<Int>(0)

    /// Runs `body` and returns its result with how long it took, in seconds.
    static func time<R>(_ body: () throws -> R) rethrows -> (result: R, seconds: Double) {
        let outermost = depth.add(1, ordering: .relaxed).oldValue == 0
        if outermost { persistence_callgrind_begin() }
        defer {
            if outermost { InstructionLabel.current.withCString { persistence_callgrind_end($0) } }
            depth.subtract(1, ordering: .relaxed)
        }
        let clock = ContinuousClock()
        let start = clock.now
        let result = try body()
        let elapsed = start.duration(to: clock.now)
        return (result, Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18)
    }
}

/// What the benchmark is measuring now — `"S2 ours"`, a workload and an implementation, as in `compare.json` — set by
/// the harness around each run: the label of the instruction counts `make instructions` collects.
public enum InstructionLabel {
    private static let label = Mutex("unlabelled")

    /// The current label.
    public static var current: String { label.withLock { $0 } }

    /// Runs `body` with `workload` and `implementation` as the label of what it times.
    public static func measuring<R>(_ workload: String, _ implementation: String, _ body: () throws -> R) rethrows
        -> R
    {
        let previous = label.withLock { current in
            defer { current = "\(workload) \(implementation)" }
            return current
        }
        defer { label.withLock { $0 = previous } }
        return try body()
    }
}
