import PersistenceCore

/// The one place the probe asks the store to check itself.
enum StoreVerification {
    /// What `verify()` says about the store, before the probe reads anything.
    static func verify<D: Database>(_ db: D) throws -> ProbeReport.Verification {
        let report = try db.verify()
        return report.isSound ? .sound : .problems
    }
}
