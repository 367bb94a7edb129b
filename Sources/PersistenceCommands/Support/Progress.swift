import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Progress of a long command on standard error: a line redrawn in place with rate and time left on a terminal,
/// a plain line every few seconds otherwise, nothing when quiet.
package final class ProgressReporter {
    private let verb: String
    private let total: Int?
    private let quiet: Bool
    private let terminal: Bool
    private let started = Date()
    /// When the line was last drawn: the first draw waits as long as the next ones, so a short run prints nothing.
    private lazy var last = started
    private var drewLine = false
    private var drewAny = false

    package init(_ verb: String, total: Int?, quiet: Bool) {
        self.verb = verb
        self.total = total
        self.quiet = quiet
        terminal = isatty(FileHandle.standardError.fileDescriptor) == 1
    }

    /// Reports `done` records so far (cheap to call per record: it draws at most five times a second).
    package func update(_ done: Int) {
        guard !quiet else { return }
        let now = Date()
        guard now.timeIntervalSince(last) >= (terminal ? 0.2 : 5) else { return }
        last = now
        draw(done, now: now)
    }

    /// The final count, and a newline after the redrawn line.
    package func finish(_ done: Int) {
        guard !quiet, drewAny else { return }
        draw(done, now: Date())
        if terminal, drewLine { FileHandle.standardError.write(Data("\n".utf8)) }
    }

    private func draw(_ done: Int, now: Date) {
        drewAny = true
        let elapsed = max(now.timeIntervalSince(started), 0.001)
        let rate = Double(done) / elapsed
        var text = "\(verb) \(done.formatted()) records"
        if let total, total > 0 {
            let share = min(Double(done) / Double(total), 1)
            let width = 24
            let filled = Int(share * Double(width))
            text =
                "[" + String(repeating: "#", count: filled) + String(repeating: ".", count: width - filled) + "] "
                + "\(Int(share * 100))% " + text + " of \(total.formatted())"
            if rate > 0, done < total { text += " · \(Self.duration(Double(total - done) / rate)) left" }
        }
        text += " · \(Int(rate).formatted())/s"
        if terminal {
            FileHandle.standardError.write(Data(("\r\u{1B}[2K" + text).utf8))
            drewLine = true
        } else {
            FileHandle.standardError.write(Data((text + "\n").utf8))
        }
    }

    private static func duration(_ seconds: Double) -> String {
        let seconds = Int(seconds.rounded(.up))
        return seconds < 60 ? "\(seconds) s" : "\(seconds / 60) min \(seconds % 60) s"
    }
}
