public import Logging
import Synchronization

/// A swift-log destination that keeps every line in memory, for tests that check what a database logs.
///
/// ```swift
/// let log = CapturedLog()
/// builder.logger = log.logger(level: .trace)
/// …
/// #expect(!log.text.contains("secret"))
/// ```
public final class CapturedLog: Sendable {
    private let lines = Mutex<[String]>([])

    public init() {}

    /// A logger that writes here, at `level` and above.
    public func logger(label: String = "persistence.tests", level: Logger.Level = .trace) -> Logger {
        var logger = Logger(label: label) { _ in Handler(log: self) }
        logger.logLevel = level
        return logger
    }

    /// Every line so far: level, message and metadata (sorted by key).
    public var entries: [String] { lines.withLock { $0 } }

    /// Every line, joined by newlines.
    public var text: String { entries.joined(separator: "\n") }

    fileprivate func append(_ line: String) { lines.withLock { $0.append(line) } }

    private struct Handler: LogHandler {
        let log: CapturedLog
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            let all = metadata.merging(event.metadata ?? [:]) { $1 }
            let rendered = all.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
            self.log.append("\(event.level) \(event.message) \(rendered)")
        }
    }
}
