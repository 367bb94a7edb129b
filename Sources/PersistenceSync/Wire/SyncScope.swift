public import PersistenceCore

/// A part of the server's data a client syncs: a scope the server declares by name (for instance "the projects of
/// one user"), with the parameters that pick the part (the user's id).
///
/// The server decides what a scope's records are and whether a client may subscribe to it; a client holds the
/// records of the scopes it subscribes to and no other, and may write only records that are in them before and after
/// the change.
public struct SyncScope: Sendable, Hashable, Codable {
    /// The scope's name, as the server declares it.
    public var name: String
    /// The values that pick the scope's records.
    public var parameters: [String: Value]

    /// Creates a scope subscription.
    public init(_ name: String, _ parameters: [String: Value] = [:]) {
        self.name = name
        self.parameters = parameters
    }
}
