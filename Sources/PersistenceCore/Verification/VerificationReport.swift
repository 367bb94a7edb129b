/// What ``Database/verify()-6cqst`` found: the problems, and how much of the store it checked.
///
/// ```swift
/// let report = try db.verify()
/// guard report.isSound else {
///     for problem in report.problems { log.error("\(problem)") }   // names and keys, never values
///     return
/// }
/// ```
///
/// A report lists at most ``problemLimit`` problems, so a badly damaged store can't exhaust memory; the rest are
/// counted in ``omittedProblemCount``.
public struct VerificationReport: Sendable, Hashable, Codable, CustomStringConvertible {
    /// How many problems a report lists at most; further ones are only counted.
    public static let problemLimit = 1_000

    /// The problems found, in the order they were found (at most ``problemLimit``).
    public var problems: [VerificationProblem]
    /// How many further problems were found but not listed.
    public var omittedProblemCount: Int
    /// How many entities were checked.
    public var entitiesChecked: Int
    /// How many records were checked.
    public var recordsChecked: Int
    /// How many index entries were checked (backends whose engine keeps indexes itself, like SQLite, check them
    /// through the engine's integrity check and count none).
    public var indexEntriesChecked: Int

    /// Creates a report.
    public init(
        problems: [VerificationProblem] = [], omittedProblemCount: Int = 0, entitiesChecked: Int = 0,
        recordsChecked: Int = 0, indexEntriesChecked: Int = 0
    ) {
        self.problems = problems
        self.omittedProblemCount = omittedProblemCount
        self.entitiesChecked = entitiesChecked
        self.recordsChecked = recordsChecked
        self.indexEntriesChecked = indexEntriesChecked
    }

    /// Whether no problem was found.
    public var isSound: Bool { problems.isEmpty && omittedProblemCount == 0 }

    /// All problems found, listed or not.
    public var problemCount: Int { problems.count + omittedProblemCount }

    /// Adds a problem, or counts it once ``problemLimit`` are listed.
    public mutating func append(_ problem: VerificationProblem) {
        if problems.count < Self.problemLimit {
            problems.append(problem)
        } else {
            omittedProblemCount += 1
        }
    }

    /// A summary line, then one line per listed problem.
    public var description: String {
        var lines = [
            "\(isSound ? "sound" : "\(problemCount) problem(s)"): \(entitiesChecked) entities, "
                + "\(recordsChecked) records, \(indexEntriesChecked) index entries checked"
        ]
        lines += problems.map(\.description)
        if omittedProblemCount > 0 { lines.append("… and \(omittedProblemCount) more") }
        return lines.joined(separator: "\n")
    }
}
