/// A T row's figures: the records the tool worked on and the most memory its process held (the highest over the
/// runs), in KiB; `nil` for the in-process reference rows of T2, which are the library's own S2 and L1.
struct ToolFigures {
    var rows: Int
    /// The child's peak resident size, and where it comes from (see ``ToolProcess``).
    var peakKiB: Int?
    var peakSource: ToolProcess.PeakSource?
    /// The highest `RssAnon` and `RssFile` sampled from `/proc/<pid>/status` every 10 ms (Linux).
    var anonymousPeakKiB: Int?
    var filePeakKiB: Int?
    /// T2's copy: what it is judged against.
    var reference: ToolReference?

    /// Seconds per million records at `seconds` for the whole store.
    func secondsPerMillion(_ seconds: Double) -> Double { rows > 0 ? seconds / Double(rows) * 1e6 : 0 }
}

/// The library's own read of every record from SQLite (S2, ours) and write of every record into an encrypted LMDB
/// store (L1, ours-encrypted) at the same N, in the same run: what a copy between the two does at the least.
struct ToolReference {
    var s2Seconds: Double
    var l1Seconds: Double
    /// Whether the medians come from this run's S2 and L1 rows (else T2 measured them itself, at N).
    var fromWorkloadRows: Bool

    var seconds: Double { s2Seconds + l1Seconds }
}
