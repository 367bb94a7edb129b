package import Foundation
package import PersistenceCore

/// Writes one entity's records as CSV (RFC 4180): a header row of attribute names, then a row per record in
/// primary-key order, each row ended by a line feed. `nil` is an empty field; an empty string is a quoted `""`; other
/// values as in ``ValueText``.
///
/// Fields are escaped byte by byte on their UTF-8, never by `Character`: a quote, comma or line break followed by a
/// combining mark is one `Character` with it (`"\u{301}` is not equal to `"`), yet any CSV reader sees the quote.
package final class CSVExport {
    private let output: TextOutput
    private var row: [UInt8] = []

    /// Writes to `file` (which must not exist), or to standard output when `nil`.
    /// - Throws: ``PersistenceError/Code/invalidArgument`` for an existing file, `permissionDenied` for one that
    ///   can't be made.
    package init(file: URL?) throws {
        if let file {
            if FileManager.default.fileExists(atPath: file.path) {
                throw PersistenceError(.invalidArgument, "\(file.path) exists: an export never replaces a file")
            }
            output = try TextOutput(file: file)
        } else {
            output = TextOutput()
        }
    }

    package func writeHeader(_ layout: RecordLayout) throws {
        row.removeAll(keepingCapacity: true)
        for (position, name) in layout.names.enumerated() {
            if position > 0 { row.append(Self.comma) }
            Self.append(field: name, to: &row)
        }
        try endRow()
    }

    package func write(_ record: Record) throws {
        row.removeAll(keepingCapacity: true)
        for (position, attribute) in record.layout.entity.attributes.enumerated() {
            if position > 0 { row.append(Self.comma) }
            Self.append(field: try ValueText.csv(record.values[position], of: attribute), to: &row)
        }
        try endRow()
    }

    /// Flushes and closes the output.
    package func close() throws {
        try output.close()
    }

    private func endRow() throws {
        row.append(Self.lineFeed)
        try output.write(bytes: row)
    }

    private static let quote = UInt8(ascii: "\"")
    private static let comma = UInt8(ascii: ",")
    private static let lineFeed = UInt8(ascii: "\n")
    private static let carriageReturn = UInt8(ascii: "\r")

    /// Appends one field: `nil` as nothing; a text with a quote, comma, CR or LF byte, or an empty one, between
    /// quotes with each quote doubled; any other text as it is.
    package static func append(field text: String?, to row: inout [UInt8]) {
        guard let text else { return }
        let needsQuotes =
            text.isEmpty
            || text.utf8.contains { $0 == quote || $0 == comma || $0 == lineFeed || $0 == carriageReturn }
        guard needsQuotes else { return row.append(contentsOf: text.utf8) }
        row.append(quote)
        for byte in text.utf8 {
            row.append(byte)
            if byte == quote { row.append(quote) }
        }
        row.append(quote)
    }

    /// One field as text (see ``append(field:to:)``).
    package static func field(_ text: String?) -> String {
        var bytes: [UInt8] = []
        append(field: text, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }
}
