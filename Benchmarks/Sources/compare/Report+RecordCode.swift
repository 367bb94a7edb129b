import Workloads

/// D1: S2's fetch by what decodes a row.
extension Report {
    func recordCodeTable(_ rows: [ResultRow]) -> String {
        var table = MarkdownTable(
            header: ["Impl", "Median s", "Records/s", "× raw", "× GRDB", "Target", "Met"], rightAligned: [1, 2, 3, 4])
        table.rows = rows.map { row in
            [
                row.implementation, row.medianSeconds.secondsText, row.operationsPerSecond.rateText,
                ratio(row.ratioVsRaw), ratio(row.ratioVsReference), row.target?.text ?? "", mark(row.meetsTarget),
            ]
        }
        let notes = [
            "S2's read of every record, by what decodes a row: `ours` is the benchmarks' `Person`, which reads its "
                + "own records (hand-written `init(record:)`); `ours-@Entity` the same struct with `@Entity` and no "
                + "record code; `ours-Codable` a plain `Codable` entity, read through `Codable`'s keyed containers. "
                + "All three read the same table, filled the same way and reopened before the timed read.",
            "Raw is the C API decoding into `Person`; GRDB a `Codable` `FetchableRecord` (S2's GRDB row).",
            "Verified: a checksum of every record read against the generator's.",
        ]
        return "## D1: fetching \((rows.first?.operations ?? 0).grouped) records, by record code\n\n" + table.render()
            + "\n\n" + notes.map { "- " + $0 }.joined(separator: "\n")
    }
}
