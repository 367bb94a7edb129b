import Foundation
import Workloads

extension Report {
    /// F1: the queries' time against FTS5 through the C API, and each store's build and size.
    func fullTextTable(_ rows: [ResultRow]) -> String {
        let documents = rows.first?.records ?? 0
        return "## F1: full-text search over \(documents.grouped) documents\n\n" + searchTable(rows)
            + "\n\nEach run answers every query (top \(FullTextSubject.limit), each record read whole); the table shows "
            + "the median of the runs' totals. Raw is FTS5 through the C API (`fts5(title, body)`, `ORDER BY bm25`); "
            + "ours answer the same records in the same order on every backend. Build: storing and indexing every "
            + "document in one transaction; size: the store's files (PostgreSQL: its schema's relations)."
    }

    /// V1: the queries' time against a plain C loop over the floats in memory, and each store's build and size.
    func vectorTable(_ rows: [ResultRow]) -> String {
        let vectors = rows.first?.records ?? 0
        return "## V1: nearest neighbours among \(vectors.grouped) vectors of \(VectorCorpus.dimensions) dimensions\n\n"
            + searchTable(rows)
            + "\n\nEach run answers every query (top \(VectorSubject.limit) by cosine, each record read whole); the "
            + "table shows the median of the runs' totals. Raw is a C loop over the same floats in one array in memory "
            + "(float sums); ours compare every stored vector (doubles summed in dimension order) and answer the same "
            + "records in the same order on every backend. Build: storing every record in one transaction."
    }

    /// The rows of a search workload: time per query, against raw and ours on SQLite, build and size.
    private func searchTable(_ rows: [ResultRow]) -> String {
        var table = MarkdownTable(
            header: ["Impl", "Queries s", "ms/query", "× raw", "× ours-sqlite", "Build s", "Size MiB"],
            rightAligned: [1, 2, 3, 4, 5, 6])
        let sqlite = rows.first { $0.implementation == "ours-sqlite" }?.medianSeconds
        table.rows = rows.map { row in
            [
                row.implementation, row.medianSeconds.secondsText,
                String(format: "%.2f", row.medianSeconds * 1_000 / Double(max(1, row.operations))),
                ratio(row.ratioVsRaw), ratio(sqlite.map { row.medianSeconds / $0 }),
                (row.secondsBeforePass ?? 0).secondsText,
                String(format: "%.1f", Double(row.fileBytes ?? 0) / 1_048_576),
            ]
        }
        return table.render()
    }
}
