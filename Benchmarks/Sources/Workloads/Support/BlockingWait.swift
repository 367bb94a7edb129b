import Foundation
import Synchronization

/// Runs async work to completion from a synchronous caller, blocking the calling thread until it ends.
///
/// For the raw PostgreSQL baseline, whose prepared statements postgres-nio runs only through its `async` API, while
/// the harness times synchronous calls: one wait per timed operation, not per statement. Never call it from a task
/// (it would hold a thread of the cooperative pool) or from an event loop.
func blockingWait<R: Sendable>(_ body: @escaping @Sendable () async throws -> R) throws -> R {
    let outcome = Outcome<R>()
    let done = DispatchSemaphore(value: 0)
    Task {
        do {
            outcome.set(.success(try await body()))
        } catch {
            outcome.set(.failure(error))
        }
        done.signal()
    }
    done.wait()
    return try outcome.get()
}

/// The result of ``blockingWait(_:)``'s task, handed from the task to the waiting thread.
private final class Outcome<R: Sendable>: Sendable {
    private let result = Mutex<Result<R, any Error>?>(nil)

    func set(_ value: Result<R, any Error>) {
        result.withLock { $0 = value }
    }

    func get() throws -> R {
        guard let value = result.withLock({ $0 }) else {
            preconditionFailure("read before the task ended (programmer error)")
        }
        return try value.get()
    }
}
