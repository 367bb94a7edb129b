public import Foundation
import PersistenceCore
import PersistenceLMDB
import PersistenceSQLite

/// The timed phases of RS1, in the order they run on one store.
public enum SuitePhase: String, CaseIterable, Sendable {
    /// Every user created in one transaction.
    case insert
    /// The users named "Jane", sorted by age, with no index on the name.
    case fetch
    /// An index on `firstName` added to the full store (ours: the model's next version, an inferred migration).
    case index
    /// The same fetch again, through the index.
    case fetchIndexed = "fetch-indexed"
    /// Every "Jane" renamed "Wendy" in one transaction.
    case rename
    /// Every user deleted in one transaction.
    case deleteAll = "delete-all"
}

/// One run of RS1 or RS2: the seconds of each phase (by its name), and the closed store's size on disk after the
/// phases that change it.
public struct SuiteRun: Sendable {
    public var seconds: [String: Double] = [:]
    public var fileBytes = 0
}

/// RS1, the Realm-vs-SwiftData suite's simple objects (Jacob Bartlett's RealmVsSwiftData): a million users inserted
/// in one transaction, the users named "Jane" fetched in age order without and with an index on the name, renamed
/// "Wendy", the file measured, everything deleted.
///
/// Raw SQLite is the C API on the table ours makes (`WITHOUT ROWID`, UUIDs as 16-byte blobs); raw LMDB the C API with
/// a hand-written encoding, keyed by the UUID's bytes, and a `firstName → id` index database it fills itself. Ours is
/// an `@Entity` on SQLite, plain LMDB and encrypted LMDB; GRDB a `Codable` record and one written by hand.
public enum SuiteUsersSubject: String, CaseIterable, Sendable {
    case rawSQLite = "raw-sqlite"
    case oursSQLite = "ours-sqlite"
    case grdbCodable = "grdb-Codable"
    case grdbByHand = "grdb-by-hand"
    case rawLMDB = "raw-lmdb"
    case oursLMDBPlain = "ours-lmdb-plain"
    case oursLMDBEncrypted = "ours-lmdb-encrypted"

    /// The workload id; each phase's rows are `RS1/<phase>`.
    public static let workload = "RS1"

    /// The raw implementation on the same engine: what this one's ratios are to.
    public var raw: SuiteUsersSubject {
        switch self {
        case .rawSQLite, .oursSQLite, .grdbCodable, .grdbByHand: .rawSQLite
        case .rawLMDB, .oursLMDBPlain, .oursLMDBEncrypted: .rawLMDB
        }
    }

    /// Runs every phase on a new store in `directory`, checking each phase's result.
    public func run(_ input: SuiteUsersInput, directory: URL) throws -> SuiteRun {
        let verify = Verifier(workload: Self.workload, implementation: rawValue)
        var run = SuiteRun()
        var store = try open(directory, indexed: false)
        func timed<R>(_ phase: SuitePhase, _ body: () throws -> R) throws -> R {
            let (result, seconds) = try InstructionLabel.measuring("\(Self.workload)/\(phase.rawValue)", rawValue) {
                try Stopwatch.time(body)
            }
            run.seconds[phase.rawValue] = seconds
            return result
        }
        store.prepare(input.users)
        try timed(.insert) { try store.insert() }
        let unindexed = try timed(.fetch) { try store.fetch(named: SuiteUsersInput.fetchedName) }
        try input.check(unindexed, named: SuiteUsersInput.fetchedName, verify)
        store = try timed(.index) { try store.addIndex(directory) }
        let indexed = try timed(.fetchIndexed) { try store.fetch(named: SuiteUsersInput.fetchedName) }
        try input.check(indexed, named: SuiteUsersInput.fetchedName, verify)
        let renamed = try timed(.rename) {
            try store.rename(SuiteUsersInput.fetchedName, to: SuiteUsersInput.newName)
        }
        try verify.expect(renamed == input.janes.count, "renamed \(renamed) users, not \(input.janes.count)")
        try verify.expect(try store.fetch(named: SuiteUsersInput.fetchedName).isEmpty, "a Jane is left")
        try input.check(try store.fetch(named: SuiteUsersInput.newName), named: SuiteUsersInput.newName, verify)
        try store.close()
        run.fileBytes = try Self.bytes(in: directory)
        store = try open(directory, indexed: true)
        let deleted = try timed(.deleteAll) { try store.deleteAll() }
        try verify.expect(deleted == input.users.count, "deleted \(deleted) users, not \(input.users.count)")
        try store.close()
        return run
    }

    private func open(_ directory: URL, indexed: Bool) throws -> any SuiteUsersStore {
        switch self {
        case .rawSQLite: try RawSuiteSQLiteStore(directory: directory, indexed: indexed)
        case .oursSQLite: try OursSuiteStore(.sqlite, directory: directory, indexed: indexed)
        case .grdbCodable: try GRDBSuiteStore<GRDBSuiteUserCodable>(directory: directory, indexed: indexed)
        case .grdbByHand: try GRDBSuiteStore<GRDBSuiteUserByHand>(directory: directory, indexed: indexed)
        case .rawLMDB: try RawSuiteLMDBStore(directory: directory)
        case .oursLMDBPlain: try OursSuiteStore(.lmdbPlain, directory: directory, indexed: indexed)
        case .oursLMDBEncrypted: try OursSuiteStore(.lmdbEncrypted, directory: directory, indexed: indexed)
        }
    }

    /// The bytes of every file in `directory`: the store, with whatever log or lock files it keeps when closed.
    static func bytes(in directory: URL) throws -> Int {
        let files = try FileManager.default.contentsOfDirectory(
            at: directory, includingPropertiesForKeys: [.fileSizeKey])
        return try files.reduce(0) { total, file in
            total + (try file.resourceValues(forKeys: [.fileSizeKey]).fileSize ?? 0)
        }
    }
}

/// What RS1 asks of each implementation's store.
protocol SuiteUsersStore: AnyObject {
    /// Builds the records this store inserts from the rows, before the timed insert (the suite times instantiation
    /// apart).
    func prepare(_ users: [SuiteUserRow])
    /// Inserts what ``prepare(_:)`` made, in one transaction.
    func insert() throws
    /// The users named `name`, in ascending age.
    func fetch(named name: String) throws -> [SuiteUserRow]
    /// Adds an index on `firstName`; returns the store to go on with (ours reopens with the next model version).
    func addIndex(_ directory: URL) throws -> any SuiteUsersStore
    /// Renames every user named `name` to `newName` in one transaction; returns how many.
    func rename(_ name: String, to newName: String) throws -> Int
    /// Deletes every user in one transaction; returns how many.
    func deleteAll() throws -> Int
    func close() throws
}

/// Ours, as an app writes it: an `@Entity` user (``SuiteUser``, then ``IndexedSuiteUser`` in model version 2).
final class OursSuiteStore: SuiteUsersStore {
    private let backend: OursGraphStore
    private let db: any PersistenceCore.Database
    private let indexed: Bool

    init(_ backend: OursGraphStore, directory: URL, indexed: Bool) throws {
        self.backend = backend
        self.indexed = indexed
        let model =
            indexed
            ? Model(version: 2, entities: [IndexedSuiteUser.self]) : Model(version: 1, entities: [SuiteUser.self])
        db = try backend.open(
            directory, model: model, earlier: indexed ? [Model(version: 1, entities: [SuiteUser.self])] : [])
    }

    private var prepared: [SuiteUser] = []

    func prepare(_ users: [SuiteUserRow]) { prepared = users.map(SuiteUser.init) }

    /// Inserts the prepared users (RS1 inserts into the first version's store, before the index).
    func insert() throws {
        let users = prepared
        prepared = []
        try db.write { context in try context.create(users) }
    }

    func fetch(named name: String) throws -> [SuiteUserRow] {
        indexed ? try fetch(IndexedSuiteUser.self, name).map(\.row) : try fetch(SuiteUser.self, name).map(\.row)
    }

    private func fetch<User: Entity & SuiteUserColumns>(_ type: User.Type, _ name: String) throws -> [User] {
        try db.read { context in
            try context.recover(
                User.self, query: Query(where: Field("firstName") == name, sortedBy: [.ascending("age")]))
        }
    }

    func addIndex(_ directory: URL) throws -> any SuiteUsersStore {
        try db.close()
        return try OursSuiteStore(backend, directory: directory, indexed: true)
    }

    func rename(_ name: String, to newName: String) throws -> Int {
        indexed ? try rename(IndexedSuiteUser.self, name, newName) : try rename(SuiteUser.self, name, newName)
    }

    /// The suite's rename: fetch the users, change each, save them, in one transaction.
    private func rename<User: Entity & SuiteUserColumns>(_ type: User.Type, _ name: String, _ newName: String)
        throws -> Int
    {
        try db.write { context in
            let users = try context.recover(User.self, query: Query(where: Field("firstName") == name))
            for var user in users {
                user.firstName = newName
                try context.update(user)
            }
            return users.count
        }
    }

    func deleteAll() throws -> Int {
        try db.write { context in
            indexed ? try context.deleteAll(IndexedSuiteUser.self) : try context.deleteAll(SuiteUser.self)
        }
    }

    func close() throws { try db.close() }
}
