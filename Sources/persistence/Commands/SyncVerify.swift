import ArgumentParser
import Foundation
import PersistenceCommands
import PersistenceCore
@_spi(PersistenceBackend) import PersistenceEngine
import PersistenceSync
import PersistenceSyncHTTP
import PersistenceTool

/// `persistence sync-verify STORE --server URL`: whether a sync client's store holds what its server holds.
struct SyncVerify: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sync-verify",
        abstract: "Compare a synced store's content with its sync server's, entity by entity.",
        discussion: """
            STORE is a sync client's store (SQLite or LMDB). Its synced entities are hashed record by record, as \
            `hash` does, one digest per entity, and compared with the server's digests of the same entities for the \
            scopes the store last synced. SERVER is the sync server's HTTP endpoint (the URL the app's \
            HTTPSyncTransport uses; `digest` is appended), with the Authorization header's value in the \
            environment variable --authorization-env names; or the server's store itself, \
            postgres://USER@HOST[:PORT]/DATABASE[?schema=NAME] (password from PGPASSWORD), for a client that syncs \
            the whole store (scopes are conditions in the server's code). Nothing is written on either side: \
            changes not yet pushed or pulled show as differences — sync first. Exit status: 0 the same, 1 an entity \
            differs (listed); an error has its own status (see the README). An LMDB store is read in a child process.
            """)

    @Argument(help: "The sync client's store.") var store: String
    @Option(name: .long, help: "The sync server: its HTTP endpoint (http[s]://…) or its store (postgres://…).")
    var server: String
    @Option(name: .long, help: "The environment variable holding the Authorization header's value, for HTTP.")
    var authorizationEnv: String?
    @Flag(name: .long, help: "Print the comparison as JSON.") var json = false
    @OptionGroup var passphrase: PassphraseOptions
    @OptionGroup var child: InProcessOption

    func run() async throws {
        let locator = try locator(store)
        if child.isolates(locator) { return try ChildProcess.run(InProcessOption.childArguments, store: store) }
        let local = try reportingErrors(store) {
            try SyncedContent(StoreOpener(passphrase: passphrase.source()).open(locator))
        }
        let serverDigests = try await reportingErrors(at: server) { try await serverDigest(for: local) }
        let convergence = SyncConvergence(local: local.digests, server: serverDigests, pendingChanges: local.pending)
        print(try report(convergence))
        if !convergence.isConverged { throw ExitCode(ToolExit.problems.rawValue) }
    }

    /// The server's digests of the entities the store syncs, for its scopes.
    private func serverDigest(for local: SyncedContent) async throws -> [SyncEntityDigest] {
        if server.hasPrefix("http://") || server.hasPrefix("https://") {
            guard let url = URL(string: server) else { throw PersistenceError(.invalidArgument, "not a URL") }
            let authorization = try authorizationEnv.map { name in
                guard let value = ProcessInfo.processInfo.environment[name] else {
                    throw PersistenceError(.invalidArgument, "the environment has no \(name)")
                }
                return value
            }
            let transport = HTTPSyncTransport(url: url) { headers in
                if let authorization { headers["Authorization"] = authorization }
            }
            return try await transport.digest(
                SyncDigestRequest(clientID: local.clientID, modelVersion: local.modelVersion, scopes: local.scopes)
            ).entities
        }
        let serverLocator = try StoreLocator(server)
        guard serverLocator.backend == .postgres else {
            throw PersistenceError(.invalidArgument, "the server is an http(s):// endpoint or a postgres:// store")
        }
        guard local.scopes == nil else {
            throw PersistenceError(
                .invalidArgument,
                "the store syncs scopes, which only the sync server can pick: give its HTTP endpoint")
        }
        let opened = try StoreOpener.withoutPrompt.open(serverLocator)
        defer { try? opened.close() }
        return try local.digests.map(\.entity).compactMap { name in
            guard let layout = opened.layouts.first(where: { $0.entity.name == name }) else { return nil }
            return try SyncEntityDigest.of(layout) { try opened.forEachRecord(layout, $0) }
        }
    }

    private func report(_ convergence: SyncConvergence) throws -> String {
        let differing = Dictionary(convergence.differences.map { ($0.entity, $0) }, uniquingKeysWith: { a, _ in a })
        if json {
            let entities: [[String: Any]] = convergence.entities.map { entity in
                var item: [String: Any] = [
                    "entity": entity.entity, "records": entity.records, "digest": entity.digest,
                    "same": differing[entity.entity] == nil,
                ]
                if let difference = differing[entity.entity] {
                    item["serverRecords"] = difference.serverRecords
                    item["serverDigest"] = difference.serverDigest
                }
                return item
            }
            let object: [String: Any] = [
                "converged": convergence.isConverged, "pendingChanges": convergence.pendingChanges,
                "entities": entities, "differing": convergence.differingEntities,
            ]
            let data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .prettyPrinted])
            return String(decoding: data, as: UTF8.self)
        }
        var lines = convergence.entities.map { entity in
            if let difference = differing[entity.entity] {
                return "\(entity.entity): differs (\(difference.localRecords) records here, "
                    + "\(difference.serverRecords) on the server)"
            }
            return "\(entity.entity): same (\(entity.records) records, \(entity.digest))"
        }
        for difference in convergence.differences
        where !convergence.entities.contains(where: { $0.entity == difference.entity }) {
            lines.append("\(difference.entity): only on the server (\(difference.serverRecords) records)")
        }
        if convergence.pendingChanges > 0 {
            lines.append("\(convergence.pendingChanges) local records have changes not yet pushed: sync, then compare")
        }
        lines.append(
            convergence.isConverged
                ? "converged: the store holds the server's records of its scopes"
                : "differs: \(convergence.differingEntities.joined(separator: ", "))")
        return lines.joined(separator: "\n")
    }
}

/// A sync client's store as the store tool reads it: its journal's client record, and a digest of each synced entity.
struct SyncedContent {
    let clientID: String
    let modelVersion: Int
    let scopes: [SyncScope]?
    let pending: Int
    let digests: [SyncEntityDigest]

    /// Reads `store` and closes it.
    /// - Throws: `invalidArgument` for a store that isn't a sync client's, or that has never synced.
    init(_ store: any StoredStore) throws {
        defer { try? store.close() }
        guard let clientLayout = store.layouts.first(where: { $0.entity.name == SyncClientState.entityName }),
            let journal = store.layouts.first(where: { $0.entity.name == SyncRecordState.entityName })
        else { throw PersistenceError(.invalidArgument, "the store isn't a sync client's: it has no sync journal") }
        var client: Record?
        try store.forEachRecord(clientLayout) { client = $0 }
        guard let client, case .text(let clientID)? = client["clientID"] else {
            throw PersistenceError(.invalidArgument, "the store has never synced")
        }
        guard case .text(let synced)? = client["syncedScopes"] else {
            throw PersistenceError(.invalidArgument, "the store has never synced")
        }
        scopes = try SyncScopes.scopes(of: synced)
        var pending = 0
        try store.forEachRecord(journal) { if case .integer(let flag)? = $0["isPending"], flag != 0 { pending += 1 } }
        self.clientID = clientID
        self.pending = pending
        modelVersion = store.schemaVersion
        digests = try store.layouts.filter { !SyncJournalNames.all.contains($0.entity.name) }
            .sorted { $0.entity.name.utf8.lexicographicallyPrecedes($1.entity.name.utf8) }
            .map { layout in try SyncEntityDigest.of(layout) { try store.forEachRecord(layout, $0) } }
    }
}
