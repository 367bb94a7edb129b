import Foundation
import Workloads

/// Writes the rows as `[{"workload", "impl", "median_s", "ratio_vs_raw"}]`; memory rows (M, M2, M3, S8 on LMDB) add
/// `rows`, `peak_rss_mib`, `anon_peak_mib` and `file_peak_mib`, and the migrations' `anon_growth_mib` (the peak
/// above the anonymous memory before the migration), `open_s`, `pass_s` and `commit_s` (medians of each phase; they
/// add up to about `median_s`). S8's SQLite rows add `rows` and the same three phases: before the copy of the rows,
/// the copy, and the rest (index build and commit). O1 rows add
/// `commits`, `observers`, `ratio_vs_unobserved` (of the totals), `commit_median_s` and `commit_ratio_vs_unobserved`;
/// O2 rows `commits` (every run's), `p99_s` (`median_s` is the median latency from the start of the write),
/// `after_return_median_s`, `after_return_p99_s` and `write_median_s`. R1 rows add `rows` (stored before the
/// reconcile), `incoming`, and the counts every implementation returned: `inserted`, `updated`, `unchanged`,
/// `deleted`. P1–P6 rows are plain timings; P7 rows add `writers`, `commits` (per run), `commits_per_s` and
/// `retries` (serialization failures run again, over every run). RS1 and RS2 rows (`RS1/<phase>`) add
/// `rows` and `file_bytes`: the closed store's size after the phases that change it. T1–T3 rows (the `persistence`
/// tool) add `rows`, `records_per_s`, `s_per_million`, `peak_rss_mib` (the child's peak resident size, the highest
/// over the runs) with `peak_source` (`ru_maxrss`, or a sampled `VmHWM`: see `ToolProcess`), `anon_peak_mib` and
/// `file_peak_mib` (sampled; all `null` for T2's in-process `s2-ours` and `l1-ours-encrypted` rows); T2's `copy` row
/// adds `s2_s`, `l1_s`, `reference_s` (their sum) and `ratio_vs_reference`.
enum JSONReport {
    static func write(_ rows: [ResultRow], to url: URL) throws {
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(render(rows).utf8).write(to: url, options: .atomic)
    }

    static func render(_ rows: [ResultRow]) -> String {
        let objects = rows.map { row in
            var fields = [
                "\"workload\": \(quoted(row.workload))",
                "\"impl\": \(quoted(row.implementation))",
                "\"median_s\": \(number(row.medianSeconds))",
                "\"ratio_vs_raw\": \(row.ratioVsRaw.map(number) ?? "null")",
                "\"operations\": \(row.operations)",
            ]
            if let memory = row.memory {
                fields += [
                    "\"rows\": \(memory.rows)",
                    "\"peak_rss_mib\": \(number(Double(memory.peakKiB) / 1024))",
                    "\"anon_peak_mib\": \(number(Double(memory.anonymousPeakKiB) / 1024))",
                    "\"file_peak_mib\": \(number(Double(memory.filePeakKiB) / 1024))",
                ]
            } else if let records = row.records {
                fields.append("\"rows\": \(records)")
            }
            if let growth = row.anonymousGrowthKiB {
                fields.append("\"anon_growth_mib\": \(number(Double(growth) / 1024))")
            }
            if let figures = row.reconcile {
                fields += [
                    "\"incoming\": \(figures.incoming)", "\"inserted\": \(figures.inserted)",
                    "\"updated\": \(figures.updated)", "\"unchanged\": \(figures.unchanged)",
                    "\"deleted\": \(figures.deleted)",
                ]
            }
            if let cost = row.commitCost {
                fields += [
                    "\"commits\": \(row.operations)", "\"observers\": \(cost.observers)",
                    "\"ratio_vs_unobserved\": \(number(cost.totalRatio))",
                    "\"commit_median_s\": \(number(cost.medianCommitSeconds))",
                    "\"commit_ratio_vs_unobserved\": \(number(cost.commitRatio))",
                ]
            }
            if let latency = row.latency {
                fields += [
                    "\"commits\": \(latency.commits)", "\"p99_s\": \(number(latency.p99Seconds))",
                    "\"after_return_median_s\": \(number(latency.afterReturnMedianSeconds))",
                    "\"after_return_p99_s\": \(number(latency.afterReturnP99Seconds))",
                    "\"write_median_s\": \(number(latency.writeMedianSeconds))",
                ]
            }
            if let writers = row.concurrentWriters {
                fields += [
                    "\"writers\": \(writers.writers)", "\"commits\": \(row.operations)",
                    "\"commits_per_s\": \(number(row.operationsPerSecond))", "\"retries\": \(writers.retries)",
                ]
            }
            if let bytes = row.fileBytes { fields.append("\"file_bytes\": \(bytes)") }
            if let transfer = row.transfer {
                fields += [
                    "\"bytes_received\": \(transfer.bytes)", "\"cuts\": \(transfer.cuts)",
                    "\"retransferred_percent\": \(transfer.retransferredPercent.map(number) ?? "null")",
                ]
            }
            if let tool = row.tool {
                let mebibytes = { (kib: Int?) in kib.map { number(Double($0) / 1024) } ?? "null" }
                fields += [
                    "\"rows\": \(tool.rows)", "\"records_per_s\": \(number(row.operationsPerSecond))",
                    "\"s_per_million\": \(number(tool.secondsPerMillion(row.medianSeconds)))",
                    "\"peak_rss_mib\": \(mebibytes(tool.peakKiB))",
                    "\"anon_peak_mib\": \(mebibytes(tool.anonymousPeakKiB))",
                    "\"file_peak_mib\": \(mebibytes(tool.filePeakKiB))",
                    "\"peak_source\": \(tool.peakSource.map { quoted($0.rawValue) } ?? "null")",
                ]
                if let reference = tool.reference {
                    fields += [
                        "\"s2_s\": \(number(reference.s2Seconds))", "\"l1_s\": \(number(reference.l1Seconds))",
                        "\"reference_s\": \(number(reference.seconds))",
                        "\"ratio_vs_reference\": \(row.ratioVsReference.map(number) ?? "null")",
                    ]
                }
            }
            if let open = row.secondsBeforePass, let pass = row.secondsInPass, let commit = row.secondsAfterPass {
                fields += [
                    "\"open_s\": \(number(open))", "\"pass_s\": \(number(pass))", "\"commit_s\": \(number(commit))",
                ]
            }
            return "  {" + fields.joined(separator: ", ") + "}"
        }
        return "[\n" + objects.joined(separator: ",\n") + "\n]\n"
    }

    private static func number(_ value: Double) -> String {
        value.isFinite ? String(format: "%.6g", value) : "null"
    }

    private static func quoted(_ text: String) -> String {
        var escaped = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": escaped += "\\\""
            case "\\": escaped += "\\\\"
            case _ where scalar.value < 0x20: escaped += String(format: "\\u%04x", scalar.value)
            default: escaped.unicodeScalars.append(scalar)
            }
        }
        return escaped + "\""
    }
}
