import Foundation

extension Double {
    /// Fixed-point text with `digits` decimals.
    func formatted(digits: Int) -> String { String(format: "%.\(digits)f", self) }

    /// Seconds with about four significant digits.
    var secondsText: String {
        switch self {
        case ..<0.001: String(format: "%.6f", self)
        case ..<0.1: String(format: "%.5f", self)
        case ..<10: String(format: "%.4f", self)
        default: String(format: "%.2f", self)
        }
    }

    /// Seconds as microseconds, with a decimal.
    var microsecondsText: String { String(format: "%.1f", self * 1e6) }

    /// A rate with thousands separators (and a decimal when small).
    var rateText: String { self < 100 ? String(format: "%.1f", self) : Int(self.rounded()).grouped }
}

extension Int {
    /// `1,234,567`.
    var grouped: String {
        let digits = String(magnitude)
        var text = ""
        for (index, digit) in digits.enumerated() {
            if index > 0 && (digits.count - index).isMultiple(of: 3) { text.append(",") }
            text.append(digit)
        }
        return (self < 0 ? "-" : "") + text
    }
}

/// A Markdown table, columns padded so it also reads well in a terminal.
struct MarkdownTable {
    var header: [String]
    /// Which columns are right-aligned (numbers).
    var rightAligned: Set<Int>
    var rows: [[String]] = []

    func render() -> String {
        let widths = header.indices.map { column in
            ([header[column]] + rows.map { $0[column] }).map(\.count).max() ?? 0
        }
        func line(_ cells: [String]) -> String {
            let padded = cells.enumerated().map { column, cell in
                let padding = String(repeating: " ", count: widths[column] - cell.count)
                return rightAligned.contains(column) ? padding + cell : cell + padding
            }
            return "| " + padded.joined(separator: " | ") + " |"
        }
        let rule = widths.enumerated().map { column, width in
            rightAligned.contains(column)
                ? String(repeating: "-", count: max(width - 1, 1)) + ":" : String(repeating: "-", count: width)
        }
        return ([line(header), "| " + rule.joined(separator: " | ") + " |"] + rows.map(line)).joined(separator: "\n")
    }
}
