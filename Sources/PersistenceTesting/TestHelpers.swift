public import Foundation
public import PersistenceCore
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

/// Records an issue unless `body` throws a ``PersistenceError`` with `code`; returns the error it threw, for
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
