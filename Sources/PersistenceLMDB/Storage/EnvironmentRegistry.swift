import Foundation
import PersistenceCore
import Synchronization

/// One ``Environment`` per store file per process, as LMDB requires ("do not have open an LMDB database twice in
/// the same process at the same time"); databases opened on one path share it.
///
/// Each database (and each opening under way) is one user of its environment: ``environment(path:make:)`` adds a
/// user, ``release(_:closing:)`` removes one, and the last user's explicit close closes the handle — under this
/// registry's lock, so a store reopened at once gets a new environment only after the old one let go of the file
/// (closing a second descriptor of the lock file would drop the new one's locks).
enum EnvironmentRegistry {
    private final class WeakEnvironment: Sendable {
        weak let environment: Environment?
        init(_ environment: Environment) { self.environment = environment }
    }

    private static let open = Mutex<[String: WeakEnvironment]>([:])

    /// The environment of `path` with one more user, opening it when no live database holds it; `shared` tells
    /// whether one did.
    static func environment(path: String, make: () throws -> Environment) throws -> (
        environment: Environment, shared: Bool
    ) {
        try open.withLock { environments in
            if let existing = environments[path]?.environment, existing.users > 0 {
                existing.users += 1
                return (existing, true)
            }
            let environment = try make()
            environment.users = 1
            environments[path] = WeakEnvironment(environment)
            return (environment, false)
        }
    }

    /// Removes one user of `environment`. When it was the last: with `closing`, waits for its transactions and
    /// closes the handle; without, leaves that to the environment's release.
    /// - Throws: `nestedTransaction` when closing from inside one of its transactions (the user is kept).
    static func release(_ environment: Environment, closing: Bool) throws {
        try open.withLock { environments in
            guard environment.users > 0 else { return }
            if environment.users == 1, closing { try environment.close() }
            environment.users -= 1
            if environment.users == 0, environments[environment.path]?.environment === environment {
                environments[environment.path] = nil
            }
        }
    }
}
