/// What a migrating child process reports: the timed migration, its memory, and what reading the store back found.
public struct MigrationReport: Codable, Sendable {
    /// The migration's seconds and memory figures (KiB, since the pass over the records began), and the records
    /// read back afterwards: their count and the checksum of their version-1 form (`about` as `bio`, `karma`
    /// aside), for the parent to verify against the generator.
    public var memory = MemoryReport()
    /// Seconds from the start of the timed operation to the start of the pass over the records: for ours, opening
    /// the store (Argon2id key derivation, metadata, schema difference, dropping the old index entries).
    public var secondsBeforePass: Double?
    /// Seconds of the pass over the records: opening, decoding, rewriting, sealing and putting every record (for
    /// ours, rebuilding the index too). What follows it, to the end of the timed operation, is the commit.
    public var secondsInPass: Double?
    /// Anonymous (heap) resident memory just before the timed migration began, in KiB: what the peak is judged
    /// against (`nil` where not measured).
    public var anonymousBeforeKiB: Int?
    /// Records read back whose added attribute doesn't hold its declared default.
    public var wrongDefaults = 0
    /// Records also looked up by id and by the indexed name, and found as the generator predicts.
    public var spotChecked = 0

    public init() {}
}
