import Foundation
import Workloads

/// The sync sections: Y1's initial sync, Y2's trip from a device to another, Y3's ten devices pushing at once.
extension Report {
    func syncSections() -> [String] {
        var sections: [String] = []
        let initial = rows.filter { $0.workload == InitialSyncWorkload.workload }
        if !initial.isEmpty { sections.append(initialSyncTable(initial)) }
        let latency = rows.filter { $0.workload == SyncLatencyWorkload.workload }
        if !latency.isEmpty { sections.append(syncLatencyTable(latency)) }
        let push = rows.filter { $0.workload == PushThroughputWorkload.workload }
        if !push.isEmpty { sections.append(pushThroughputTable(push)) }
        let resumed = rows.filter { $0.workload == ResumedSyncWorkload.workload }
        if !resumed.isEmpty { sections.append(resumedSyncTable(resumed)) }
        return sections
    }

    private func initialSyncTable(_ rows: [ResultRow]) -> String {
        var table = MarkdownTable(
            header: ["Impl", "Records", "Median s", "Records/s", "× raw"], rightAligned: [1, 2, 3, 4])
        table.rows = rows.map { row in
            [
                row.implementation, row.operations.grouped, row.medianSeconds.secondsText,
                row.operationsPerSecond.rateText, ratio(row.ratioVsRaw),
            ]
        }
        let notes = [
            "Every record of a PostgreSQL store into a new, empty embedded store, timed from the first request to the "
                + "last commit (stores opened and the server filled before the clock). Ours: `SyncClient.pull()` over "
                + "the direct transport — pages of about 4 MiB of values (the first of 1,000 changes) read from the "
                + "change log, then the table, each applied set-based in one local write with its journal entries "
                + "while the next is read, the reference check after the last page. "
                + "Raw: postgres-nio reads the table of the same records in one `SELECT` (postgres-nio has no `COPY "
                + "… TO STDOUT`; its binary rows are what `COPY` would send), then one transaction of prepared "
                + "`INSERT`s (SQLite) or of `mdb_put`s (LMDB). Ratios: SQLite rows to raw-sqlite, LMDB rows to "
                + "raw-lmdb (plain).",
            "Verified: the report counts every record, none rejected, and every stored record matches the "
                + "generator's.",
        ]
        return section("## Y1: the first sync of a device", table, notes: notes)
    }

    private func syncLatencyTable(_ rows: [ResultRow]) -> String {
        let table = latencyTable(
            rows, header: ["Impl", "Records", "Write + push µs", "Trip µs", "p99 µs", "Pull + observe µs", "p99 µs"])
        let notes = [
            "Two SQLite devices on one server store: for each record device A writes it (one local transaction) and "
                + "pushes, then device B pulls, and B's observation of `Person` (`observe(tracking:)` counting "
                + "records) delivers the count that includes it. Each step starts when the previous one returns, as "
                + "when a server notification wakes B (`syncNow()`); a polling client adds up to its interval.",
            "`Trip µs` runs from the start of A's write to B's value (median, 99th percentile over every record of "
                + "every run); `Pull + observe µs` from the return of A's push. `ours-http` goes through the "
                + "Hummingbird handler in this process and async-http-client over a local socket. Raw is the floor "
                + "of the trip by hand: postgres-nio inserts the record in one transaction on one connection and "
                + "reads it back by id on another.",
        ]
        return section("## Y2: from a write on one device to an observer on another", table, notes: notes)
    }

    private func resumedSyncTable(_ rows: [ResultRow]) -> String {
        var table = MarkdownTable(
            header: ["Impl", "Records", "Median s", "MB received", "Cuts", "Re-transferred"],
            rightAligned: [1, 2, 3, 4, 5])
        table.rows = rows.map { row in
            let transfer = row.transfer ?? TransferFigures(bytes: 0, cuts: 0)
            return [
                row.implementation, row.operations.grouped, row.medianSeconds.secondsText,
                String(format: "%.1f", Double(transfer.bytes) / 1e6), transfer.cuts.grouped,
                transfer.retransferredPercent.map { String(format: "%+.1f %%", $0) } ?? "",
            ]
        }
        let notes = [
            "A first sync of every record into a new SQLite store through the HTTP endpoint, behind a local proxy "
                + "that carries the server's bytes at \(ResumedSyncWorkload.linkBytesPerSecond * 8 / 1_000_000) "
                + "Mbit/s. `cut-every-2s`: the proxy drops every connection every 2 seconds; the client's `pull()` "
                + "fails (`connectionLost`, `unreachable`) and is called again at once, going on after the last "
                + "page it applied. `MB received`: what the proxy delivered (HTTP headers and bodies), "
                + "`Re-transferred`: how much more than the uninterrupted sync's (goal ≤ 5 %).",
            "Both use the binary wire form (`SyncWireFormat.binary`, the transport's default); `json-uninterrupted` "
                + "is the same uninterrupted sync with JSON pages (`.json`), what the form saves in bytes and time.",
            "Pages are sized to arrive in about a quarter of a second (between 64 KiB and 4 MiB of values), and a "
                + "dropped connection quarters the size: a page that takes longer than the link lasts would never "
                + "arrive. Verified: every record stored matches the generator's.",
        ]
        return section("## Y4: a first sync over a link that drops every 2 seconds", table, notes: notes)
    }

    private func pushThroughputTable(_ rows: [ResultRow]) -> String {
        var table = MarkdownTable(
            header: ["Impl", "Devices", "Records", "Median s", "Records/s", "× raw"], rightAligned: [1, 2, 3, 4, 5])
        table.rows = rows.map { row in
            [
                row.implementation, PushThroughputWorkload.clients.grouped, row.operations.grouped,
                row.medianSeconds.secondsText, row.operationsPerSecond.rateText, ratio(row.ratioVsRaw),
            ]
        }
        let notes = [
            "\(PushThroughputWorkload.clients) SQLite devices, each holding its share of the records created offline "
                + "(local writes of 10 records), push at once to one sync server (its store's pool: "
                + "\(PushThroughputWorkload.clients) connections); timed from the start of the first push to the end "
                + "of the last. A push sends batches of up to 500 records, each one transaction on the server, "
                + "set-based: the device's row locked, an advisory lock per record, the stored records (locked) and "
                + "their versions read in a statement each, conflicts decided in memory, one multi-row write, the "
                + "change log written by the table's trigger; batches that run no delete rule run at once "
                + "(`READ COMMITTED`).",
            "ours-direct-2-servers: the devices split between two sync servers on the one store, each its own "
                + "database with half the connections (two server processes' worth, in one process).",
            "ours-direct-referring: the same fields in records that each refer to one of ten crews (a relationship, "
                + "checked on the server): each reference locks its crew until the batch commits. `own-crew`: each "
                + "device's records in a crew of its own; `shared-crews`: every batch refers to all ten, so the "
                + "pushes wait for each other's locks on them.",
            "Raw is the same records by hand: \(PushThroughputWorkload.clients) postgres-nio connections at once, "
                + "each inserting its share in transactions of 500 prepared `INSERT`s. Verified: nothing rejected, "
                + "and every record on the server matches the generator's.",
        ]
        return section("## Y3: \(PushThroughputWorkload.clients) devices pushing at once", table, notes: notes)
    }
}
