import Foundation
import PersistenceCore
import Synchronization

/// One ``Environment`` per store file per process, as LMDB requires ("do not have open an LMDB database twice in
/// the same process at the same time"); databases opened on one path share it.
enum EnvironmentRegistry {
    private final class WeakEnvironment: Sendable {
        weak let environment: Environment?
        init(_ environment: Environment) { self.environment = environment }
    }

    private static let open = Mutex<[String: WeakEnvironment]>([:])

    /// The environment of `path`, opening it when no live database holds it; `shared` tells whether one did.
    static func environment(path: String, make: () throws -> Environment) throws -> (
        environment: Environment, shared: Bool
    ) {
        try open.withLock { environments in
            if let existing = environments[path]?.environment { return (existing, true) }
            let environment = try make()
            environments[path] = WeakEnvironment(environment)
            return (environment, false)
        }
    }
}
