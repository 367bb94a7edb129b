import ArgumentParser
package import Foundation
package import PersistenceCore

/// The formats of an export.
package enum ExportFileFormat: String, ExpressibleByArgument, CaseIterable, Sendable {
    /// JSON Lines: a header line with the schema, then a line per record (every entity).
    case jsonl
    /// CSV: a header row of attribute names, then a row per record (one entity).
    case csv
}

/// Where an export's records go, in either format, with progress and Ctrl-C checked per record. A failed or
/// interrupted export removes its file: half an export is no export.
package final class ExportSink {
    private enum Output {
        case lines(TextOutput)
        case csv(CSVExport)
    }

    private let output: Output
    private let file: URL?
    private let progress: ProgressReporter
    private(set) var written = 0

    /// Runs `body` with a sink writing `layouts`' records to `file` (standard output when `nil`), finishing the
    /// export when it returns and removing the file when anything throws.
    /// - Parameters:
    ///   - header: The JSON Lines header (its schema is `layouts`' entities).
    ///   - available: Every entity the store has, named in the message refusing CSV of several entities.
    ///   - total: The records to export, for the progress bar.
    /// - Throws: ``PersistenceError/Code/invalidArgument`` for CSV of other than one entity, or an existing file;
    ///   what writing or `body` throws.
    package static func exporting(
        _ format: ExportFileFormat, to file: URL?, header: ExportHeader, layouts: [RecordLayout],
        available: [String], total: Int?, quiet: Bool, _ body: (ExportSink) throws -> Void
    ) throws {
        let output: Output
        switch format {
        case .jsonl:
            let lines = try file.map { try TextOutput(file: $0) } ?? TextOutput()
            output = .lines(lines)
        case .csv:
            guard layouts.count == 1, let layout = layouts.first else {
                throw PersistenceError(
                    .invalidArgument,
                    "CSV holds one entity: name it with --entity (the store has \(available.joined(separator: ", ")))")
            }
            let csv = try CSVExport(file: file)
            output = .csv(csv)
            try csv.writeHeader(layout)
        }
        // Progress only when the records go to a file: on standard output it would mix with them in a terminal.
        let sink = ExportSink(
            output: output, file: file,
            progress: ProgressReporter("exported", total: total, quiet: quiet || file == nil))
        do {
            if case .lines(let lines) = output { try JSONLines.writeHeader(header, to: lines) }
            try body(sink)
            switch output {
            case .lines(let lines): try lines.close()
            case .csv(let csv): try csv.close()
            }
        } catch {
            if let file { try? FileManager.default.removeItem(at: file) }
            throw error
        }
        sink.progress.finish(sink.written)
    }

    private init(output: Output, file: URL?, progress: ProgressReporter) {
        self.output = output
        self.file = file
        self.progress = progress
    }

    /// Writes one record (attributes in its layout's order), then reports progress and checks for Ctrl-C.
    package func write(_ record: Record) throws {
        switch output {
        case .lines(let lines): try JSONLines.write(record, to: lines)
        case .csv(let csv): try csv.write(record)
        }
        written += 1
        progress.update(written)
        try Interruption.check()
    }
}
