import Workloads

/// D1 (S2's fetch by what decodes a row) and N1 (Lighter's Northwind suite): what record code costs.
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
        return section(
            "## D1: fetching \((rows.first?.operations ?? 0).grouped) records, by record code", table, notes: notes)
    }

    func northwindTable(_ rows: [ResultRow]) -> String {
        var table = MarkdownTable(
            header: ["Impl", "Median s", "Rows/s", "× raw", "Target", "Met"], rightAligned: [1, 2, 3])
        table.rows = rows.map { row in
            [
                row.implementation, row.medianSeconds.secondsText, row.operationsPerSecond.rateText,
                ratio(row.ratioVsRaw), row.target?.text ?? "", mark(row.meetsTarget),
            ]
        }
        let notes = [
            "Lighter's PerformanceTestSuite: Northwind's `Orders` (14 columns, 15,889 rows, generated here in its "
                + "shape: texts, dates as text, nullable columns) read whole into structs 10 times, then the timed "
                + "reads (500 at the default N). Raw is the C API by column index; ours `@Entity` and plain "
                + "`Codable` entities; GRDB a record decoded by hand (`init(row:)` by index) and a `Codable` one.",
            "Published on other hardware (sqlite-data's README): Lighter 1.12× raw, SharingGRDB 1.19×, GRDB "
                + "hand-written 2.6×, GRDB `Codable` 7.4×.",
            "Verified: the last read of each implementation adds up to the generated rows, column by column.",
        ]
        return section("## N1: Northwind `Orders` (Lighter's suite)", table, notes: notes)
    }
}
