import Foundation
public import Hummingbird
import PersistenceCore
import PersistenceSync
public import PersistenceSyncServer

/// The sync server's HTTP endpoints for Hummingbird: `POST <path>/push`, `POST <path>/pull` and `POST <path>/digest`
/// (a client's convergence check), bodies in JSON (the `PersistenceSync` wire types) or, for pushes, their results
/// and pulled pages, in the compact binary form (`SyncBinaryWire`) when the request's `Content-Type` or `Accept`
/// names it; errors as JSON `SyncWireError` with a fitting status (`415` for a body in a form the endpoint doesn't
/// read).
///
/// Every request passes `authenticate` first: it reads the request's credentials (a bearer token, a session cookie,
/// a client certificate's name — whatever the app uses) and answers what the client may sync, or throws to refuse
/// it (throw `PersistenceError(.unauthorized, …)` or a Hummingbird `HTTPError`). TLS is Hummingbird's
/// (`HummingbirdTLS`), or a proxy's in front of it.
///
/// ```swift
/// let router = Router()
/// SyncHTTPHandler(server: syncServer) { request, _ in
///     guard let user = try await sessions.user(for: request) else {
///         throw PersistenceError(.unauthorized, "sign in first")
///     }
///     return .only([SyncScope("projects", ["owner": .integer(user.id)])])
/// }.register(on: router.group("sync"))
/// try await Application(router: router).runService()
/// ```
///
/// Hummingbird rather than Vapor: it is built on the same SwiftNIO and swift-service-lifecycle as the rest of a
/// Swift server, adds few dependencies (Vapor's build is about twice as long here), and a handler is a plain
/// closure over a router group, which mounts under any app's own routes and middleware.
public struct SyncHTTPHandler<Context: RequestContext>: Sendable {
    /// Decides what a request's client may sync, or throws to refuse it.
    public typealias Authenticate = @Sendable (_ request: Request, _ context: Context) async throws -> SyncAccess

    private let server: SyncServer
    private let authenticate: Authenticate
    private let maximumBodySize: Int

    /// A handler for `server`.
    /// - Parameters:
    ///   - server: The sync server.
    ///   - maximumBodySize: The largest request body accepted, in bytes (a push of that many bytes is refused with
    ///     status 413).
    ///   - authenticate: Decides what each request's client may sync.
    public init(server: SyncServer, maximumBodySize: Int = 64 << 20, authenticate: @escaping Authenticate) {
        self.server = server
        self.maximumBodySize = maximumBodySize
        self.authenticate = authenticate
    }

    /// Adds `push`, `pull` and `digest` to `router` (a router or a group of one, at the path the clients' URL names).
    public func register(on router: some RouterMethods<Context>) {
        router.post("push") { request, context in
            try await respond(to: request, context) { (push: SyncPush, access) in
                try await server.push(push, access: access)
            }
        }
        router.post("pull") { request, context in
            try await respond(to: request, context) { (pull: SyncPullRequest, access) in
                try await server.pull(pull, access: access)
            }
        }
        router.post("digest") { request, context in
            try await respond(to: request, context) { (digest: SyncDigestRequest, access) in
                try await server.digest(digest, access: access)
            }
        }
    }

    private func respond<Body: Decodable, Answer: Encodable>(
        to request: Request, _ context: Context, _ answer: (Body, SyncAccess) async throws -> Answer
    ) async throws -> Response {
        let access: SyncAccess
        do {
            access = try await authenticate(request, context)
        } catch let error as PersistenceError {
            return try Self.response(error)
        }
        let form = request.headers[.contentType].map { SyncWireFormat(contentType: $0) } ?? .json
        guard let form, form == .json || Body.self is any SyncBinaryMessage.Type else {
            return try Self.response(
                status: .unsupportedMediaType,
                SyncWireError(PersistenceError(.invalidArgument, "the server reads this request as JSON only")))
        }
        let bytes = try await request.body.collect(upTo: maximumBodySize)
        let body: Body
        do {
            body = try Self.decode(Body.self, form, bytes)
        } catch {
            return try Self.response(
                PersistenceError(.invalidArgument, "the request's body isn't one the server reads"))
        }
        let binary = request.headers[.accept].map(SyncWireFormat.acceptsBinary) ?? false
        do {
            let value = try await answer(body, access)
            if binary, let message = value as? any SyncBinaryMessage {
                return Response(
                    status: .ok, headers: [.contentType: SyncBinaryWire.mediaType],
                    body: ResponseBody(byteBuffer: ByteBuffer(bytes: message.binaryEncoded())))
            }
            return try Self.response(status: .ok, value)
        } catch {
            return try Self.response(error)
        }
    }

    private static func decode<Body: Decodable>(_ type: Body.Type, _ form: SyncWireFormat, _ bytes: ByteBuffer)
        throws -> Body
    {
        if form == .binary, let binary = Body.self as? any SyncBinaryMessage.Type,
            let body = try bytes.withUnsafeReadableBytes({ try binary.init(binary: $0) }) as? Body
        {
            return body
        }
        return try JSONDecoder().decode(Body.self, from: Data(bytes.readableBytesView))
    }

    private static func response(_ error: any Error) throws -> Response {
        let wire = SyncWireError(error)
        return try response(status: HTTPResponse.Status(code: wire.status), wire)
    }

    private static func response(status: HTTPResponse.Status, _ value: some Encodable) throws -> Response {
        let data = try SyncWireError.encoder().encode(value)
        return Response(
            status: status, headers: [.contentType: "application/json"],
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: data)))
    }
}
