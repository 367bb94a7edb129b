/// One timed S8 migration and what reading the store back found.
public struct MappingMigrationRun: Sendable {
    /// The timed migration, in seconds.
    public var seconds = 0.0
    /// Seconds before the copy of the rows (see `MigrationPhaseClock`); `nil` when not marked.
    public var secondsBeforeCopy: Double?
    /// Seconds of the copy of the rows.
    public var secondsInCopy: Double?
    /// The records read back with the C API, for the parent to verify against the generator.
    public var checksum = Checksum()
    /// Records also looked up by the indexed `name` through the library (ours).
    public var spotChecked = 0

    public init() {}
}
