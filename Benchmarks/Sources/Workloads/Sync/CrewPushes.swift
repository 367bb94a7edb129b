import Foundation
import PersistenceCore
import PersistencePostgres
import PersistenceSQLite
import PersistenceSync
import PersistenceSyncServer

/// Y3's records with a relationship: a person's fields, in one of ten crews (deleted with it).
struct CrewMember: Entity, Hashable {
    var id: Int64
    var crewID: Int64
    var name: String
    var email: String
    var age: Int
    var score: Double
    var bio: String

    static let relationships: [Relationship] = [.toOne("crew", Crew.self, foreignKey: "crewID", onDelete: .cascade)]

    init(_ person: Person, crewID: Int64) {
        id = person.id
        self.crewID = crewID
        name = person.name
        email = person.email
        age = person.age
        score = person.score
        bio = person.bio
    }

    var person: Person { Person(id: id, name: name, email: email, age: age, score: score, bio: bio) }
}

/// The ten crews every device's members refer to.
struct Crew: Entity, Hashable {
    var id: Int64
    var name: String
}

/// Y3's pushes of records that refer to others: ten devices push their share of `records` crew members at once, each
/// member referring to one of ten crews the devices pulled before (not timed). A batch with references runs at once
/// with the others, each reference locking its crew until the batch commits — `sharedParents`: every batch refers
/// to all ten crews (the pushes wait for each other's locks on them), otherwise each device's members are in a crew
/// of its own.
enum CrewPushes {
    static let schema = "bench_sync_crews"
    static let serverModel = Model(version: 1, entities: [Crew.self, CrewMember.self])
    static let clientModel = serverModel.synced()

    /// The seconds of the pushes alone, after checking that every member arrived unchanged.
    static func run(
        _ shares: [[Person]], expected: Checksum, sharedParents: Bool, server: PostgresServer, directory: URL,
        verify: Verifier, measure: (() throws -> [SyncReport]) throws -> (result: [SyncReport], seconds: Double)
    ) throws -> Double {
        var builder = try server.builder(schema: schema)
        builder.model = serverModel
        builder.poolSize = shares.count
        try builder.deleteStore()
        let store = try builder.create()
        defer { try? store.close() }
        try store.write { context in
            for id in 1...Int64(shares.count) { try context.create(Crew(id: id, name: "crew \(id)")) }
        }
        let syncServer = try SyncServer(database: store, model: serverModel)
        var devices: [SyncClient<SQLiteDatabase>] = []
        defer { for device in devices { try? device.database.close() } }
        for (index, share) in shares.enumerated() {
            var local = SQLiteBuilder(databaseName: "crew-device-\(index)", model: clientModel)
            local.directory = directory
            let device = try SyncClient(
                database: try local.create(), model: clientModel, transport: syncServer.directTransport)
            devices.append(device)
            _ = try blockingWait { try await device.pull() }
            for chunk in share.chunks(of: PushThroughputWorkload.recordsPerWrite) {
                let members = chunk.map { person in
                    // Shared: a device's members in every crew; else all in the device's own.
                    CrewMember(
                        person,
                        crewID: sharedParents
                            ? person.id / Int64(shares.count) % Int64(shares.count) + 1 : Int64(index) + 1)
                }
                try device.database.write { context in try context.create(members) }
            }
        }
        let reports = try measure { [devices] in
            try blockingWait {
                try await withThrowingTaskGroup(of: SyncReport.self) { group in
                    for device in devices { group.addTask { try await device.push() } }
                    return try await group.reduce(into: [SyncReport]()) { $0.append($1) }
                }
            }
        }
        let pushed = reports.result.reduce(0) { $0 + $1.pushed }
        let rejected = reports.result.reduce(0) { $0 + $1.rejections.count }
        try verify.expect(pushed == expected.count && rejected == 0, "pushed \(pushed), \(rejected) rejected")
        let stored = try store.read { context in
            Checksum(try context.recover(CrewMember.self, query: Query()).map(\.person))
        }
        try verify.expect(stored, equals: expected, "the server's crew members")
        return reports.seconds
    }
}
