public import Foundation
public import PersistenceCore
import Synchronization
public import Testing

/// Runs `body` with a fresh temporary directory, removed when it returns or throws.
///
/// Backend tests use it so each test has its own store files.
public func withTemporaryDirectory<R>(_ body: (URL) throws -> R) throws -> R {
    let directory = try makeTemporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    return try body(directory)
}

/// A new, empty directory under the temporary directory; the caller removes it.
func makeTemporaryDirectory() throws -> URL {
    let directory = FileManager.default.temporaryDirectory
        .appendingPathComponent("persistence-tests-\(UUID().uuidString)", isDirectory: true)
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    return directory
}

/// Records an issue unless `body` throws a `PersistenceError` with `code`; returns the error it threw, for
/// checks of its message or cause.
///
/// Tests match errors by code, never by whole-error equality: messages may improve, codes are stable.
@discardableResult
public func expectError<R>(
    _ code: PersistenceError.Code, _ comment: Comment? = nil, sourceLocation: SourceLocation = #_sourceLocation,
    _ body: () throws -> R
) -> PersistenceError? {
    do {
        _ = try body()
        Issue.record(
            "expected a PersistenceError .\(code), nothing was thrown. \(comment?.rawValue ?? "")",
            sourceLocation: sourceLocation)
    } catch let error as PersistenceError {
        #expect(error.code == code, "\(error)", sourceLocation: sourceLocation)
        return error
    } catch {
        Issue.record("expected a PersistenceError .\(code), got \(error)", sourceLocation: sourceLocation)
    }
    return nil
}

/// Records an issue unless `body` throws a `PersistenceError` with `code` — ``expectError(_:_:sourceLocation:_:)``
/// for async work, such as the next value of an observation whose read fails.
///
/// ```swift
/// var values = db.observe(Stranger.self).makeAsyncIterator()
/// await expectAsyncError(.unknownEntity) { try await values.next() }
/// ```
@discardableResult
public func expectAsyncError<R>(
    _ code: PersistenceError.Code, _ comment: Comment? = nil, sourceLocation: SourceLocation = #_sourceLocation,
    _ body: () async throws -> R
) async -> PersistenceError? {
    do {
        _ = try await body()
        Issue.record(
            "expected a PersistenceError .\(code), nothing was thrown. \(comment?.rawValue ?? "")",
            sourceLocation: sourceLocation)
    } catch let error as PersistenceError {
        #expect(error.code == code, "\(error)", sourceLocation: sourceLocation)
        return error
    } catch {
        Issue.record("expected a PersistenceError .\(code), got \(error)", sourceLocation: sourceLocation)
    }
    return nil
}

/// Cancels a task once it is known, from any thread — for code (a progress handler, a transaction block) that runs
/// inside the task's work and wants to cancel it midway.
public final class TaskCanceller: Sendable {
    private let task = Mutex<Task<Void, any Error>?>(nil)
    private let requested = Mutex(false)

    public init() {}

    /// Hands over the task to cancel; cancels it at once when ``cancel()`` came first.
    public func set(_ task: Task<Void, any Error>) {
        self.task.withLock { $0 = task }
        if requested.withLock({ $0 }) { task.cancel() }
    }

    /// Cancels the task (as soon as it has been handed over).
    public func cancel() {
        requested.withLock { $0 = true }
        task.withLock { $0 }?.cancel()
    }
}
