import ArgumentParser
import Foundation
package import PersistenceCore

/// What `migrate` did or rehearsed, as text or JSON.
package struct MigrationOutcome: Codable, Sendable {
    package enum Mode: String, Codable, Sendable {
        /// The store was migrated.
        case migration
        /// A copy of the store was migrated and verified, then deleted.
        case rehearsal
        /// The migration ran on the server in a transaction that was rolled back.
        case rollback
    }

    package struct Seconds: Codable, Sendable {
        package var copy: Double?
        package var migration: Double
        package var verification: Double?
    }

    package struct Step: Codable, Sendable {
        package struct Entity: Codable, Sendable {
            package var name: String
            package var recordsBefore: Int
            package var recordsAfter: Int
            package var recordsRewritten: Int
        }

        package var fromVersion: Int
        package var toVersion: Int
        package var kind: String
        package var changes: [String]
        package var entities: [Entity]
    }

    package var store: String
    package var mode: Mode
    /// Whether the store needed a migration at all.
    package var needed: Bool
    package var fromVersion: Int
    package var toVersion: Int
    package var steps: [Step] = []
    package var seconds: Seconds?
    /// The rehearsal's check of the migrated copy.
    package var verification: VerificationReport?

    /// A store already at the model's version.
    init(store: String, mode: Mode, current model: Model) {
        self.store = store
        self.mode = mode
        needed = false
        fromVersion = model.version
        toVersion = model.version
    }

    /// A migration from `pending.lowerBound` to `pending.upperBound`; `report` is `nil` when only the version changed.
    init(store: String, mode: Mode, pending: ClosedRange<Int>, report: MigrationReport?, seconds: Seconds) {
        self.store = store
        self.mode = mode
        needed = true
        fromVersion = report?.fromVersion ?? pending.lowerBound
        toVersion = report?.toVersion ?? pending.upperBound
        self.seconds = seconds
        steps = (report?.steps ?? []).map { step in
            Step(
                fromVersion: step.fromVersion, toVersion: step.toVersion, kind: step.kind.rawValue,
                changes: step.changes,
                entities: step.entities.map {
                    Step.Entity(
                        name: $0.name, recordsBefore: $0.recordsBefore, recordsAfter: $0.recordsAfter,
                        recordsRewritten: $0.recordsRewritten)
                })
        }
    }

    /// Prints the outcome; throws ``ToolExit/problems`` when a rehearsal's copy did not verify.
    func print(json: Bool) throws {
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            Swift.print(String(decoding: try encoder.encode(self), as: UTF8.self))
        } else {
            Swift.print(text)
        }
        if let verification, !verification.isSound { throw ExitCode(ToolExit.problems.rawValue) }
    }

    var text: String {
        guard needed else {
            return "\(store): at the app's schema version \(toVersion): nothing to migrate"
        }
        var lines: [String]
        switch mode {
        case .migration: lines = ["\(store): migrated"]
        case .rehearsal: lines = ["\(store): rehearsed on a copy (the store is untouched)"]
        case .rollback: lines = ["\(store): rehearsed on the server in a transaction rolled back (nothing changed)"]
        }
        lines.append("  schema version \(fromVersion) → \(toVersion)")
        if steps.isEmpty { lines.append("  no schema change: only the version is written") }
        for step in steps {
            let counts = step.entities.map {
                "\($0.name) \($0.recordsBefore) → \($0.recordsAfter) records (\($0.recordsRewritten) rewritten)"
            }
            lines.append("  \(step.fromVersion) → \(step.toVersion) (\(step.kind)):")
            lines += step.changes.map { "    \($0)" }
            lines += counts.map { "    \($0)" }
        }
        if let seconds {
            var times: [String] = []
            if let copy = seconds.copy { times.append("copied in \(Self.format(copy))") }
            times.append("migrated in \(Self.format(seconds.migration))")
            if let verification = seconds.verification { times.append("verified in \(Self.format(verification))") }
            lines.append("  " + times.joined(separator: " · "))
        }
        if let verification {
            lines.append(
                VerificationText.text(verification, store: "  the migrated copy").split(separator: "\n").joined(
                    separator: "\n  "))
        }
        return lines.joined(separator: "\n")
    }

    private static func format(_ seconds: Double) -> String {
        seconds < 10 ? String(format: "%.3f s", seconds) : String(format: "%.1f s", seconds)
    }
}
