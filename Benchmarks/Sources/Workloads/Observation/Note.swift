public import PersistenceCore

/// The other entity of the observation stores: what O1's observers watch while `Person` records are written, so
/// that no commit of the timed loop concerns them. No workload writes one.
public struct Note: Entity, Hashable {
    public var id: Int64
    public var text: String

    public init(id: Int64, text: String) {
        self.id = id
        self.text = text
    }
}
