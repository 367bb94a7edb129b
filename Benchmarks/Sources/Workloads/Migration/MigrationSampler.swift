import Synchronization

/// The clock and memory figures of one timed migration, sampled as it runs: from the migration's progress handler
/// for ours (every 1,000 records), from the loop for raw (every 1,024).
///
/// Shared with the progress handler, which is `@Sendable`: the state is behind a `Mutex`, uncontended (the
/// handler runs on the thread that opens the store).
final class MigrationSampler: Sendable {
    private struct State {
        var probe = MemoryProbe()
        var report = MemoryReport()
        var anonymousBeforeKiB: Int?
        var started: ContinuousClock.Instant?
        var passStarted: ContinuousClock.Instant?
        var passEnded: ContinuousClock.Instant?
    }

    private let state = Mutex(State())

    /// Marks the start of the timed operation, keeping the anonymous memory before it.
    func start() {
        state.withLock { state in
            state.anonymousBeforeKiB = state.probe.sample().anonymousKiB
            state.started = ContinuousClock.now
        }
    }

    /// Marks the start of the pass over the records, once: keeps the peak so far (opening; for ours the Argon2id key
    /// derivation) apart and resets the kernel's peak counter, so the peak that follows is the pass's alone.
    func beginPass() {
        state.withLock { state in
            guard state.passStarted == nil else { return }
            let opened = state.probe.sample()
            state.report.openPeakKiB = opened.peakKiB
            state.report.baselineKiB = opened.anonymousKiB + opened.fileKiB
            state.report.peakWasReset = MemoryProbe.resetPeak()
            state.report.anonymousPeakKiB = opened.anonymousKiB
            state.report.filePeakKiB = opened.fileKiB
            state.passStarted = ContinuousClock.now
        }
    }

    /// Marks the end of the pass over the records (before the commit), once.
    func endPass() {
        state.withLock { state in
            if state.passEnded == nil { state.passEnded = ContinuousClock.now }
        }
    }

    /// Samples anonymous and file-backed resident memory.
    func sample() {
        state.withLock { state in
            let sample = state.probe.sample()
            state.report.anonymousPeakKiB = max(state.report.anonymousPeakKiB, sample.anonymousKiB)
            state.report.filePeakKiB = max(state.report.filePeakKiB, sample.fileKiB)
        }
    }

    /// Ends the measurement of a migration that took `seconds`: into `report`, the memory figures since
    /// ``beginPass()`` (`VmHWM` included), the anonymous memory before ``start()``, and the seconds from ``start()``
    /// to ``beginPass()`` and from there to ``endPass()``, `nil` when they weren't marked.
    func finish(into report: inout MigrationReport, seconds: Double) {
        state.withLock { state in
            let end = state.probe.sample()
            state.report.peakKiB = end.peakKiB
            state.report.anonymousPeakKiB = max(state.report.anonymousPeakKiB, end.anonymousKiB)
            state.report.filePeakKiB = max(state.report.filePeakKiB, end.fileKiB)
            report.memory = state.report
            report.memory.seconds = seconds
            report.anonymousBeforeKiB = state.anonymousBeforeKiB
            report.secondsBeforePass = Self.seconds(from: state.started, to: state.passStarted)
            report.secondsInPass = Self.seconds(from: state.passStarted, to: state.passEnded)
        }
    }

    private static func seconds(from start: ContinuousClock.Instant?, to end: ContinuousClock.Instant?) -> Double? {
        guard let start, let end else { return nil }
        let elapsed = start.duration(to: end)
        return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18
    }
}
