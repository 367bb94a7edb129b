public import Foundation
import PersistenceCore
public import Testing

/// One named check of the conformance suite, run against any backend.
///
/// A backend's tests run every check with one parameterised test, so a check added here runs everywhere:
///
/// ```swift
/// @Test(arguments: ConformanceSuite.checks)
/// func conformance(_ check: ConformanceCheck) async throws {
///     try await check.run(on: SQLiteConformance())
/// }
/// ```
public struct ConformanceCheck: Sendable, CustomTestStringConvertible {
    /// What the check proves, shown as the test's argument.
    public let name: String
    /// How long the check may take once it runs (not counting the time it waits for its turn).
    public let timeLimit: Duration
    private let body: @Sendable (any ConformanceBackend, URL) async throws -> Void

    /// Creates a check from a generic body; the suite's own checks are in ``ConformanceSuite/checks``.
    public init(
        _ name: String, timeLimit: Duration = .seconds(300),
        _ body: @escaping @Sendable (any ConformanceBackend, URL) async throws -> Void
    ) {
        self.name = name
        self.timeLimit = timeLimit
        self.body = body
    }

    /// Runs the check against `backend` in a fresh temporary directory, removed afterwards.
    ///
    /// Checks run a few at a time, each on a thread of its own (their synchronous database calls never block the
    /// cooperative pool); a check that takes longer than `timeLimit` once it runs — not counting the time it waited
    /// for its turn — is an issue. Give the test itself a generous `.timeLimit` as a backstop against hangs.
    /// - Parameter timeLimit: Overrides the check's own ``timeLimit``.
    ///
    /// When the environment variable `PERSISTENCE_CHECKS` is set, only the checks whose names contain it run (a
    /// developer's focus on some checks); the others pass at once.
    public func run(on backend: some ConformanceBackend, timeLimit: Duration? = nil) async throws {
        if let focus = ProcessInfo.processInfo.environment["PERSISTENCE_CHECKS"], !focus.isEmpty,
            !name.localizedCaseInsensitiveContains(focus)
        {
            return
        }
        try await CheckScheduler.shared.run(timeLimit: timeLimit ?? self.timeLimit) {
            let directory = try makeTemporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            try await body(backend, directory)
        }
    }

    /// The check's name.
    public var testDescription: String { name }

    /// A check whose body gets one fresh database of the suite's entities.
    static func database(
        _ name: String, timeLimit: Duration = .seconds(300),
        _ body: @escaping @Sendable (any Database) async throws -> Void
    ) -> ConformanceCheck {
        ConformanceCheck(name, timeLimit: timeLimit) { backend, directory in
            try await withDatabase(backend, directory, conformanceEntities, body)
        }
    }
}

/// The checks every backend must pass.
public enum ConformanceSuite {
    /// Every check, in a stable order.
    public static let checks: [ConformanceCheck] =
        RoundTripChecks.all + EdgeValueChecks.all + ConstraintChecks.all + QueryChecks.all + IterationChecks.all
        + MutationChecks.all
        + TransactionChecks.all + StorageChecks.all
        + InjectionChecks.all + ConcurrencyChecks.all + ErrorChecks.all + VerificationChecks.all
        + ObservationChecks.all + AppObservationChecks.all + ObservationTrackingChecks.all + ListObservationChecks.all
        + SavepointChecks.all + CancellationChecks.all + StampChecks.all + LifecycleChecks.all
        + HandWrittenRecordChecks.all + RelationshipChecks.all + AggregateChecks.all + GraphLoadingChecks.all
        + RelationshipQueryChecks.all + ManyToManyChecks.all + WriteHookChecks.all + DynamicRecordChecks.all
        + FullTextChecks.all + VectorChecks.all
}

/// Opens a database of `entities` on an existential backend, keeping its concrete type for the body.
func withDatabase<R>(
    _ backend: any ConformanceBackend, _ directory: URL, _ entities: [any Entity.Type],
    _ body: (any Database) async throws -> R
) async throws -> R {
    func open<B: ConformanceBackend>(_ backend: B) throws -> any Database {
        try backend.open(entities: entities, in: directory)
    }
    return try await body(open(backend))
}
