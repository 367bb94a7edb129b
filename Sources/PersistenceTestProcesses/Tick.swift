import PersistenceCore

/// What `LMDBWorker` writes and the LMDB suite's multi-process tests read back: one record per commit, numbered by
/// writer.
package struct Tick: Entity, Equatable {
    package var id: Int64
    package var writer: Int64
    package var sequence: Int64

    package init(id: Int64, writer: Int64, sequence: Int64) {
        self.id = id
        self.writer = writer
        self.sequence = sequence
    }

    /// Tick `sequence` of `writer`, keyed apart from every other writer's.
    package init(writer: Int64, sequence: Int64) {
        self.init(id: writer * 1_000_000 + sequence, writer: writer, sequence: sequence)
    }
}
