public import AsyncHTTPClient
public import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import PersistenceCore
public import PersistenceSync
import Synchronization

/// The HTTP transport: pushes and pulls through a sync server's HTTP endpoints (`PersistenceSyncHummingbird`), with
/// async-http-client (Linux and Apple platforms; `https` URLs use TLS).
///
/// ```swift
/// let transport = HTTPSyncTransport(url: URL(string: "https://api.example.com/sync")!) { headers in
///     headers["Authorization"] = "Bearer \(await session.token())"
/// }
/// let client = try SyncClient(database: local, model: model, transport: transport, scopes: scopes)
/// ```
public struct HTTPSyncTransport: SyncTransport {
    /// Adds the request's credentials to its headers (called for every request).
    public typealias Authorize = @Sendable (_ headers: inout [String: String]) async throws -> Void

    private let base: String
    private let client: HTTPClient
    private let timeout: Duration
    private let authorize: Authorize
    private let maximumResponseSize: Int
    private let wireFormat: SyncWireFormat
    /// Set once the server refused a binary push (an older server reads JSON only): later pushes go as JSON.
    private let serverReadsOnlyJSON = FallbackFlag()

    /// A transport to the endpoints under `url` (the path the server registered them at).
    /// - Parameters:
    ///   - url: The endpoints' base URL; `push`, `pull` and `digest` are appended.
    ///   - client: The HTTP client; unless given, a shared one that reports a server it can't connect to at once
    ///     (`unreachable`) rather than trying again until the timeout.
    ///   - timeout: The longest one request may take.
    ///   - maximumResponseSize: The largest answer read, in bytes.
    ///   - wireFormat: How pushes, their results and pulled pages travel: `SyncWireFormat.binary` (the default)
    ///     asks the server for the compact binary form and pushes in it; a server that doesn't read it answers JSON,
    ///     and a push it refuses for its form is sent again as JSON (and every later one). `.json` sends and asks
    ///     for JSON only.
    ///   - authorize: Adds credentials to each request's headers.
    public init(
        url: URL, client: HTTPClient = HTTPSyncTransport.sharedClient, timeout: Duration = .seconds(60),
        maximumResponseSize: Int = 256 << 20, wireFormat: SyncWireFormat = .binary,
        authorize: @escaping Authorize = { _ in }
    ) {
        var base = url.absoluteString
        if base.hasSuffix("/") { base.removeLast() }
        self.base = base
        self.client = client
        self.timeout = timeout
        self.maximumResponseSize = maximumResponseSize
        self.wireFormat = wireFormat
        self.authorize = authorize
    }

    /// The client transports use unless given one: async-http-client's shared settings, except that a connection
    /// that can't be made fails the request at once (an app offline learns so without waiting) and a connection
    /// attempt gives up after 10 seconds. Never shut down, like `HTTPClient.shared`.
    public static let sharedClient: HTTPClient = {
        var configuration = HTTPClient.Configuration.singletonConfiguration
        configuration.connectionPool.retryConnectionEstablishment = false
        configuration.timeout.connect = .seconds(10)
        return HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
    }()

    public func push(_ push: SyncPush) async throws -> SyncPushResult {
        guard wireFormat == .binary, !serverReadsOnlyJSON.isSet else {
            return try await post("push", body: .json(try SyncWireError.encoder().encode(push)))
        }
        do {
            return try await post("push", body: .binary(push.binaryEncoded()))
        } catch is BinaryBodyRefused {
            // Refused before anything was applied: the same push again, in the form the server reads.
            serverReadsOnlyJSON.set()
            return try await post("push", body: .json(try SyncWireError.encoder().encode(push)))
        }
    }

    public func pull(_ request: SyncPullRequest) async throws -> SyncPullPage {
        try await post("pull", body: .json(try SyncWireError.encoder().encode(request)))
    }

    public func digest(_ request: SyncDigestRequest) async throws -> SyncDigest {
        try await post("digest", body: .json(try SyncWireError.encoder().encode(request)))
    }

    /// A request's body, in its form.
    private enum Body {
        case json(Data)
        case binary([UInt8])

        var contentType: String {
            switch self {
            case .json: "application/json"
            case .binary: SyncBinaryWire.mediaType
            }
        }

        var buffer: ByteBuffer {
            switch self {
            case .json(let data): ByteBuffer(bytes: data)
            case .binary(let bytes): ByteBuffer(bytes: bytes)
            }
        }
    }

    /// A binary push the server refused for its form (an older server): nothing of it was applied.
    private struct BinaryBodyRefused: Error {}

    private func post<Answer: Decodable>(_ endpoint: String, body: Body) async throws -> Answer {
        var request = HTTPClientRequest(url: base + "/" + endpoint)
        request.method = .POST
        var headers = ["Content-Type": body.contentType, "Accept": accept(Answer.self)]
        try await authorize(&headers)
        for (name, value) in headers { request.headers.replaceOrAdd(name: name, value: value) }
        request.body = .bytes(body.buffer)
        let response: HTTPClientResponse
        let bytes: ByteBuffer
        do {
            response = try await client.execute(request, timeout: .nanoseconds(Int64(timeout.nanoseconds)))
            bytes = try await response.body.collect(upTo: maximumResponseSize)
        } catch {
            throw Self.transportError(error)
        }
        guard response.status == .ok else {
            let wire = try? JSONDecoder().decode(SyncWireError.self, from: Data(bytes.readableBytesView))
            if case .binary = body, Self.refusesForm(response.status.code, wire) { throw BinaryBodyRefused() }
            if let wire { throw wire.persistenceError }
            throw PersistenceError(
                response.status.code >= 500 ? .unreachable : .invalidArgument,
                "the sync server answered HTTP \(response.status.code)")
        }
        let form = response.headers.first(name: "Content-Type").flatMap(SyncWireFormat.init(contentType:)) ?? .json
        do {
            // Only a message asked for in binary comes back in it.
            if form == .binary, let binary = Answer.self as? any SyncBinaryMessage.Type,
                let answer = try bytes.withUnsafeReadableBytes({ try binary.init(binary: $0) }) as? Answer
            {
                return answer
            }
            return try JSONDecoder().decode(Answer.self, from: Data(bytes.readableBytesView))
        } catch {
            throw PersistenceError(
                .backend, "the sync server's answer isn't one the client reads", underlyingError: error)
        }
    }

    /// The `Accept` header for an answer: the binary form first when the answer has one and the transport uses it.
    private func accept<Answer>(_ answer: Answer.Type) -> String {
        guard wireFormat == .binary, answer is any SyncBinaryMessage.Type else { return "application/json" }
        return SyncBinaryWire.mediaType + ", application/json;q=0.5"
    }

    /// Whether an error answer to a binary body says the server doesn't read the form: `415`, or an older server's
    /// `400` for a body it couldn't read as JSON.
    private static func refusesForm(_ status: UInt, _ wire: SyncWireError?) -> Bool {
        if status == 415 { return true }
        guard status == 400, let wire else { return false }
        return wire.code == PersistenceError.Code.invalidArgument.rawValue
            && wire.message == "the request's body isn't one the server reads"
    }

    /// A failure with no answer: `unreachable` when nothing was sent (the connection was never made), else
    /// `connectionLost` (a push's outcome is then unknown; pushing again is safe).
    private static func transportError(_ error: any Error) -> PersistenceError {
        let neverConnected: Bool
        switch error {
        case is NIOConnectionError: neverConnected = true
        case let error as HTTPClientError: neverConnected = error == .connectTimeout
        case let error as IOError: neverConnected = error.errnoCode == ECONNREFUSED
        case let error as ChannelError:
            if case .connectTimeout = error { neverConnected = true } else { neverConnected = false }
        default: neverConnected = false
        }
        return PersistenceError(
            neverConnected ? .unreachable : .connectionLost,
            neverConnected ? "the sync server can't be reached" : "the connection to the sync server was lost",
            underlyingError: error)
    }
}

/// A flag set once, read by every request of a transport and its copies.
private final class FallbackFlag: Sendable {
    private let flag = Mutex(false)

    var isSet: Bool { flag.withLock { $0 } }

    func set() { flag.withLock { $0 = true } }
}

extension Duration {
    fileprivate var nanoseconds: Double {
        Double(components.seconds) * 1e9 + Double(components.attoseconds) / 1e9
    }
}
