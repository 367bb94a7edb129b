import CSV
package import Foundation
package import PersistenceCore

/// Writes one entity's records as CSV (RFC 4180, through CSV.swift): a header row of attribute names, then a row per
/// record in primary-key order. `nil` is an empty field; an empty string is a quoted `""`; other values as in
/// ``ValueText``.
package struct CSVExport {
    private let writer: CSVWriter
    private let stream: OutputStream

    /// Writes to `file`, or to standard output when `nil`.
    package init(file: URL?) throws {
        let path = file?.path ?? "/dev/stdout"
        if let file, FileManager.default.fileExists(atPath: file.path) {
            throw PersistenceError(.invalidArgument, "\(file.path) exists: an export never replaces a file")
        }
        guard let stream = OutputStream(toFileAtPath: path, append: file == nil) else {
            throw PersistenceError(.permissionDenied, "\(path) can't be written")
        }
        self.stream = stream
        do {
            writer = try CSVWriter(stream: stream)
        } catch {
            throw PersistenceError(.permissionDenied, "\(path) can't be written", underlyingError: error)
        }
    }

    package func writeHeader(_ layout: RecordLayout) throws {
        try wrapped { try writer.write(row: layout.names) }
    }

    package func write(_ record: Record) throws {
        writer.beginNewRow()
        for (position, attribute) in record.layout.entity.attributes.enumerated() {
            let text = try ValueText.csv(record.values[position], of: attribute)
            try wrapped { try writer.write(field: text ?? "", quoted: text?.isEmpty ?? false) }
        }
    }

    /// Ends the last row and closes the output.
    package func close() throws {
        try wrapped {
            writer.beginNewRow()
            try writer.write(field: "")
        }
        stream.close()
    }

    private func wrapped(_ body: () throws -> Void) throws {
        do {
            try body()
        } catch let error as PersistenceError {
            throw error
        } catch {
            throw PersistenceError(.ioFailure, "the CSV output could not be written", underlyingError: error)
        }
    }
}
