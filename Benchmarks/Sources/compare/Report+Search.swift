import Foundation
import Workloads

extension Report {
    /// F1: the queries' time against FTS5 through the C API, and each store's build and size.
    func fullTextTable(_ rows: [ResultRow]) -> String {
        var table = MarkdownTable(
            header: ["Impl", "Queries s", "ms/query", "× raw", "× ours-sqlite", "Build s", "Size MiB"],
            rightAligned: [1, 2, 3, 4, 5, 6])
        let sqlite = rows.first { $0.implementation == FullTextSubject.ours.rawValue }?.medianSeconds
        table.rows = rows.map { row in
            [
                row.implementation, row.medianSeconds.secondsText,
                String(format: "%.2f", row.medianSeconds * 1_000 / Double(max(1, row.operations))),
                ratio(row.ratioVsRaw), ratio(sqlite.map { row.medianSeconds / $0 }),
                (row.secondsBeforePass ?? 0).secondsText,
                String(format: "%.1f", Double(row.fileBytes ?? 0) / 1_048_576),
            ]
        }
        let documents = rows.first?.records ?? 0
        return "## F1: full-text search over \(documents.grouped) documents\n\n" + table.render()
            + "\n\nEach run answers every query (top \(FullTextSubject.limit), each record read whole); the table shows "
            + "the median of the runs' totals. Raw is FTS5 through the C API (`fts5(title, body)`, `ORDER BY bm25`); "
            + "ours answer the same records in the same order on every backend. Build: storing and indexing every "
            + "document in one transaction; size: the store's files (PostgreSQL: its schema's relations)."
    }
}
