import AsyncHTTPClient
import Foundation
import Hummingbird
import NIOCore
import NIOHTTP1
import PersistenceCore
import PersistenceSQLite
import PersistenceSync
import PersistenceSyncHTTP
import PersistenceSyncHummingbird
import PersistenceSyncServer
import Synchronization
import Testing

/// The two wire forms over HTTP: what the handler answers to each request, and a client that meets a server that
/// reads JSON only.
@Suite(.timeLimit(.minutes(5)))
struct HTTPWireFormatTests {
    private struct Answer {
        let status: UInt
        let contentType: String?
        let body: Data
    }

    private func post(_ url: URL, _ endpoint: String, contentType: String, accept: String, body: Data) async throws
        -> Answer
    {
        var request = HTTPClientRequest(url: url.absoluteString + "/" + endpoint)
        request.method = .POST
        request.headers.add(name: "Authorization", value: "Bearer admin")
        request.headers.add(name: "Content-Type", value: contentType)
        request.headers.add(name: "Accept", value: accept)
        request.body = .bytes(ByteBuffer(bytes: body))
        let response = try await HTTPSyncTransport.sharedClient.execute(request, timeout: .seconds(30))
        let bytes = try await response.body.collect(upTo: 1 << 24)
        return Answer(
            status: response.status.code, contentType: response.headers.first(name: "Content-Type"),
            body: Data(bytes.readableBytesView))
    }

    @Test func theHandlerAnswersInTheFormAskedForAndRefusesOnesItDoesNotRead() async throws {
        let store = try await offPool { try freshServerStore() }
        let server = try await offPool { try SyncServer(database: store, model: serverModel) }
        try await withHTTPServer(server) { url in
            let project = SyncChange(
                entity: "Project", key: .integer(1), values: ["id": .integer(1), "name": .text("binary")], version: 0)
            let push = SyncPush(
                clientID: "hand", modelVersion: clientModel.version,
                entries: [SyncPush.Entry(sequence: 1, change: project)])
            let binary = SyncBinaryWire.mediaType
            let pushed = try await post(
                url, "push", contentType: binary, accept: binary, body: Data(push.binaryEncoded()))
            #expect(pushed.status == 200 && pushed.contentType == binary)
            #expect(try SyncPushResult(binary: pushed.body).outcomes.map(\.kind) == [.applied])

            let pull = try JSONEncoder().encode(
                SyncPullRequest(clientID: "hand", modelVersion: clientModel.version, cursor: 0, after: nil, limit: 10))
            let inBinary = try await post(url, "pull", contentType: "application/json", accept: binary, body: pull)
            #expect(inBinary.contentType == binary)
            let page = try SyncPullPage(binary: inBinary.body)
            #expect(page.changes.map(\.values) == [project.values])
            // Asked for JSON (an older client): JSON, the same page.
            let inJSON = try await post(
                url, "pull", contentType: "application/json", accept: "application/json", body: pull)
            #expect(inJSON.contentType == "application/json")
            // (The same changes: the cursor follows the server's transactions, which went on meanwhile.)
            let same = try JSONDecoder().decode(SyncPullPage.self, from: inJSON.body)
            #expect(same.changes == page.changes && same.next == page.next)

            // A form the endpoint doesn't read: 415, nothing applied.
            for (endpoint, contentType, body) in [
                ("push", "text/plain", Data("push".utf8)), ("pull", binary, pull),
                ("digest", binary, Data(push.binaryEncoded())),
            ] {
                let refused = try await post(url, endpoint, contentType: contentType, accept: binary, body: body)
                #expect(refused.status == 415, "\(endpoint) in \(contentType)")
                #expect(try JSONDecoder().decode(SyncWireError.self, from: refused.body).code == "invalidArgument")
            }
            // Damaged binary: 400, and the store holds only the first push's record.
            var damaged = push.binaryEncoded()
            damaged.removeLast()
            let broken = try await post(url, "push", contentType: binary, accept: binary, body: Data(damaged))
            #expect(broken.status == 400)
            #expect(try await Contents.of(store).projects == [Project(id: 1, name: "binary")])
        }
    }

    /// A body read as an earlier release's handler reads it: JSON only, `nil` when it isn't (counted in `binaryBodies`
    /// when it isn't marked JSON).
    private static func jsonOnly<Body: Decodable & Sendable>(
        _ request: Request, _ type: Body.Type, counting binaryBodies: borrowing Mutex<Int>
    ) async throws -> Body? {
        let bytes = try await request.body.collect(upTo: 1 << 24)
        if request.headers[.contentType] != "application/json" { binaryBodies.withLock { $0 += 1 } }
        return try? JSONDecoder().decode(Body.self, from: Data(bytes.readableBytesView))
    }

    private static func json(_ value: some Encodable, status: HTTPResponse.Status = .ok) throws -> Response {
        Response(
            status: status, headers: [.contentType: "application/json"],
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: try JSONEncoder().encode(value))))
    }

    /// A server of an earlier release reads JSON only: it answers JSON to a binary client, and refuses its binary
    /// push with the 400 it gives a body it can't read; the client pushes that batch again in JSON, and every later
    /// one, and nothing is lost or applied twice.
    @Test func aClientMeetingAServerThatReadsOnlyJSONFallsBackToIt() async throws {
        let store = try await offPool { try freshServerStore() }
        let server = try await offPool { try SyncServer(database: store, model: serverModel) }
        let binaryBodies = Mutex(0)
        let jsonPushes = Mutex(0)
        let router = Router()
        let sync = router.group("sync")
        let unreadable = SyncWireError(
            PersistenceError(.invalidArgument, "the request's body isn't one the server reads"))
        sync.post("push") { request, _ in
            guard let push = try await Self.jsonOnly(request, SyncPush.self, counting: binaryBodies) else {
                return try Self.json(unreadable, status: .badRequest)
            }
            jsonPushes.withLock { $0 += 1 }
            return try Self.json(try await server.push(push))
        }
        sync.post("pull") { request, _ in
            guard let pull = try await Self.jsonOnly(request, SyncPullRequest.self, counting: binaryBodies) else {
                return try Self.json(unreadable, status: .badRequest)
            }
            return try Self.json(try await server.pull(pull))
        }
        try await withHTTPRouter(router) { url in
            let directory = try temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let phone = try SyncClient(
                database: SQLiteBuilder.client("phone", in: directory).create(), model: clientModel,
                transport: httpTransport(url, token: "admin"), pushBatchSize: 2)
            for id in 1...5 {
                try await phone.database.write { try $0.create(Project(id: Int64(id), name: "p\(id)")) }
            }
            let report = try await phone.sync()
            #expect(report.pushed == 5 && report.rejections.isEmpty)
            #expect(binaryBodies.withLock { $0 } == 1, "only the first push went in binary")
            #expect(jsonPushes.withLock { $0 } == 3)
            #expect(try await Contents.of(store).projects.count == 5)
            #expect(try await phone.contents() == Contents.of(store))
        }
    }
}
