public import AsyncHTTPClient
public import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import PersistenceCore
public import PersistenceSync

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

    /// A transport to the endpoints under `url` (the path the server registered them at).
    /// - Parameters:
    ///   - url: The endpoints' base URL; `push`, `pull` and `digest` are appended.
    ///   - client: The HTTP client; unless given, a shared one that reports a server it can't connect to at once
    ///     (`unreachable`) rather than trying again until the timeout.
    ///   - timeout: The longest one request may take.
    ///   - maximumResponseSize: The largest answer read, in bytes.
    ///   - authorize: Adds credentials to each request's headers.
    public init(
        url: URL, client: HTTPClient = HTTPSyncTransport.sharedClient, timeout: Duration = .seconds(60),
        maximumResponseSize: Int = 256 << 20,
        authorize: @escaping Authorize = { _ in }
    ) {
        var base = url.absoluteString
        if base.hasSuffix("/") { base.removeLast() }
        self.base = base
        self.client = client
        self.timeout = timeout
        self.maximumResponseSize = maximumResponseSize
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

    public func push(_ push: SyncPush) async throws -> SyncPushResult { try await post("push", push) }

    public func pull(_ request: SyncPullRequest) async throws -> SyncPullPage { try await post("pull", request) }

    public func digest(_ request: SyncDigestRequest) async throws -> SyncDigest { try await post("digest", request) }

    private func post<Body: Encodable, Answer: Decodable>(_ endpoint: String, _ body: Body) async throws -> Answer {
        var request = HTTPClientRequest(url: base + "/" + endpoint)
        request.method = .POST
        var headers = ["Content-Type": "application/json", "Accept": "application/json"]
        try await authorize(&headers)
        for (name, value) in headers { request.headers.replaceOrAdd(name: name, value: value) }
        request.body = .bytes(ByteBuffer(bytes: try SyncWireError.encoder().encode(body)))
        let response: HTTPClientResponse
        let bytes: ByteBuffer
        do {
            response = try await client.execute(request, timeout: .nanoseconds(Int64(timeout.nanoseconds)))
            bytes = try await response.body.collect(upTo: maximumResponseSize)
        } catch {
            throw Self.transportError(error)
        }
        let data = Data(bytes.readableBytesView)
        guard response.status == .ok else {
            if let wire = try? JSONDecoder().decode(SyncWireError.self, from: data) { throw wire.persistenceError }
            throw PersistenceError(
                response.status.code >= 500 ? .unreachable : .invalidArgument,
                "the sync server answered HTTP \(response.status.code)")
        }
        do {
            return try JSONDecoder().decode(Answer.self, from: data)
        } catch {
            throw PersistenceError(
                .backend, "the sync server's answer isn't one the client reads", underlyingError: error)
        }
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

extension Duration {
    fileprivate var nanoseconds: Double {
        Double(components.seconds) * 1e9 + Double(components.attoseconds) / 1e9
    }
}
