import PersistenceCore
import Synchronization

/// A migration's progress on standard error: one ``ProgressReporter`` per pass (an entity's enumeration, rewrite,
/// mapping or reference fixing in a step), finished when the next pass begins.
final class MigrationProgressPrinter: Sendable {
    private struct Pass {
        var key: String
        var reporter: ProgressReporter
        var done: Int
    }

    private let quiet: Bool
    // Called on the opening thread only; the lock makes the handler `Sendable` as builders require.
    private let current = Mutex<Pass?>(nil)

    init(quiet: Bool) { self.quiet = quiet }

    /// The handler for a builder's `migrationProgress`.
    var handler: MigrationProgressHandler {
        { [self] progress in report(progress) }
    }

    private func report(_ progress: MigrationProgress) {
        let step = progress.step.map { "\($0.lowerBound) → \($0.upperBound) " } ?? ""
        let key = "\(step)\(progress.entity): \(progress.stage.rawValue)"
        current.withLock { pass in
            if pass?.key != key {
                if let pass { pass.reporter.finish(pass.done) }
                pass = Pass(key: key, reporter: ProgressReporter(key, total: progress.total, quiet: quiet), done: 0)
            }
            pass?.done = progress.completed
            pass?.reporter.update(progress.completed)
        }
    }

    /// Finishes the last pass's line.
    func finish() {
        current.withLock { pass in
            if let pass { pass.reporter.finish(pass.done) }
            pass = nil
        }
    }
}
