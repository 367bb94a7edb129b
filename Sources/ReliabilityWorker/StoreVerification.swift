import PersistenceCore

/// The one place the probe asks the store to check itself.
enum StoreVerification {
    /// What `verify()` says about the store, before the probe reads anything.
    ///
    /// MERGE: when `Database.verify()` lands, replace the body with
    /// `let report = try db.verify(); return report.isSound ? .sound : .problems`. Until then every store counts as
    /// unverified, and the bit-flip test fails only on wrong values (which sealing must prevent), not on wrong
    /// result sets (a flipped index key loses an entry, which only a verification can report).
    static func verify<D: Database>(_ db: D) throws -> ProbeReport.Verification {
        .unavailable
    }
}
