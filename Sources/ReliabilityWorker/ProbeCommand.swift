import ArgumentParser
import PersistenceCore

/// `probe`: opens a (possibly damaged) copy of the bit-flip store, reads everything back and prints one JSON line
/// with the outcome.
struct Probe: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Open a possibly damaged bit-flip store, read everything back and print the outcome as JSON.")

    @OptionGroup var store: StoreOptions

    @Option(help: "How many records the store was populated with.")
    var records: Int64 = 400

    @Flag(help: "Read without calling verify() first, as an app's ordinary launch does.")
    var skipVerify = false

    func run() throws {
        let report: ProbeReport
        do {
            report = try store.open([Note.self], ProbeWork(records: records, verifies: !skipVerify))
        } catch {
            report = ProbeReport(outcome: .error, verification: .notRun, code: errorCode(error))
        }
        try WorkerOutput.json(report)
    }
}

/// What `probe` prints.
struct ProbeReport: Codable {
    enum Outcome: String, Codable {
        /// Every read returned what was written.
        case intact
        /// Opening, verifying or reading threw; ``ProbeReport/code`` says which error.
        case error
        /// The store opened and `verify()` reported problems (reads were not compared).
        case verifyProblems
        /// A record came back with content other than what was written for its id, with no error: sealing should
        /// make this impossible on an encrypted store, whatever `verify()` says.
        case wrongValue
        /// A query's result set differs from what was written (a record or index entry missing), with no error.
        case wrongResult
    }

    /// What `verify()` said before the reads.
    enum Verification: String, Codable {
        /// The store did not open, or the probe was told not to verify.
        case notRun
        case sound
        case problems
    }

    var outcome: Outcome
    var verification: Verification
    var code: String?
    var detail: String?
}

struct ProbeWork: StoreWork {
    let records: Int64
    /// Whether `verify()` runs before the reads.
    let verifies: Bool

    func run<D: Database>(_ db: D) throws -> ProbeReport {
        let verification: ProbeReport.Verification
        do {
            verification = verifies ? try StoreVerification.verify(db) : .notRun
        } catch {
            return ProbeReport(outcome: .error, verification: .notRun, code: errorCode(error), detail: "verify")
        }
        if verification == .problems {
            return ProbeReport(outcome: .verifyProblems, verification: verification)
        }
        do {
            var report = try compare(db)
            report.verification = verification
            return report
        } catch {
            return ProbeReport(outcome: .error, verification: verification, code: errorCode(error), detail: "read")
        }
    }

    /// Reads the store three ways — a scan, every id, every index value — and compares with what was written.
    private func compare<D: Database>(_ db: D) throws -> ProbeReport {
        func wrong(_ outcome: ProbeReport.Outcome, _ detail: String) -> ProbeReport {
            ProbeReport(outcome: outcome, verification: .notRun, detail: detail)
        }
        let expectedIDs = Array(1...records)
        let scanned = try db.recover(Note.self)
        for note in scanned where note != Note.expected(note.id) || !(1...records).contains(note.id) {
            return wrong(.wrongValue, "scan: record \(note.id)")
        }
        if scanned.map(\.id) != expectedIDs { return wrong(.wrongResult, "scan: \(scanned.count) records") }
        for id in expectedIDs {
            guard let note = try db.recover(Note.self, id: id) else { return wrong(.wrongResult, "id \(id) missing") }
            if note != Note.expected(id) { return wrong(.wrongValue, "id \(id)") }
        }
        for tag in 0..<Note.tags {
            let name = "t\(tag)"
            let found = try db.recover(Note.self, key: "tag", value: name)
            for note in found where note != Note.expected(note.id) || note.tag != name {
                return wrong(.wrongValue, "index \(name): record \(note.id)")
            }
            if found.map(\.id).sorted() != expectedIDs.filter({ Note.tag($0) == name }) {
                return wrong(.wrongResult, "index \(name): \(found.count) records")
            }
        }
        return ProbeReport(outcome: .intact, verification: .notRun)
    }
}
