import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A TCP proxy on a local port in front of another: the server's bytes to the client go at most `bytesPerSecond`
/// (a mobile link, not a local socket's), and ``cutAll()`` drops every connection at once, as a lost network does.
/// Counts the bytes it delivered to clients. Blocking sockets, a thread per direction of each connection.
final class CuttingProxy: Sendable {
    /// The port clients connect to.
    let port: Int
    private let upstream: Int
    private let bytesPerSecond: Int
    private let listener: Int32
    private let open = Mutex<Set<Int32>>([])
    private let delivered = Atomic<Int>(0)
    private let stopped = Atomic<Bool>(false)

    /// A proxy to `127.0.0.1:upstream`.
    init(upstream: Int, bytesPerSecond: Int) throws {
        self.upstream = upstream
        self.bytesPerSecond = bytesPerSecond
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
        }
        guard fd >= 0, bound == 0, listen(fd, 64) == 0,
            withUnsafeMutablePointer(
                to: &address,
                {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
                }) == 0
        else {
            throw VerificationError(workload: "Y4", implementation: "proxy", message: "the proxy can't listen")
        }
        listener = fd
        port = Int(UInt16(bigEndian: address.sin_port))
        Thread.detachNewThread { [self] in acceptLoop() }
    }

    /// Bytes delivered to clients so far.
    var bytesDelivered: Int { delivered.load(ordering: .relaxed) }

    /// Drops every open connection (both ends), as a lost network does.
    func cutAll() {
        let fds = open.withLock { $0 }
        for fd in fds { shutdown(fd, Int32(SHUT_RDWR)) }
    }

    /// Stops accepting and drops every connection.
    func stop() {
        stopped.store(true, ordering: .relaxed)
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
        cutAll()
    }

    private func acceptLoop() {
        while !stopped.load(ordering: .relaxed) {
            let client = accept(listener, nil, nil)
            guard client >= 0 else { continue }
            let server = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            address.sin_port = UInt16(upstream).bigEndian
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(server, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            guard connected == 0 else {
                close(client)
                close(server)
                continue
            }
            open.withLock { $0.formUnion([client, server]) }
            let finished = EndCount()
            let done: @Sendable () -> Void = { [self] in
                // The second direction to end closes both sockets.
                guard finished.count.add(1, ordering: .relaxed).newValue == 2 else { return }
                open.withLock { $0.subtract([client, server]) }
                close(client)
                close(server)
            }
            Thread.detachNewThread { [self] in
                pump(from: client, to: server, limited: false)
                done()
            }
            Thread.detachNewThread { [self] in
                pump(from: server, to: client, limited: true)
                done()
            }
        }
    }

    /// Copies until either side ends; the server's bytes at most `bytesPerSecond`, counted.
    private func pump(from source: Int32, to destination: Int32, limited: Bool) {
        var buffer = [UInt8](repeating: 0, count: 16 << 10)
        let clock = ContinuousClock()
        // When the link is free again: no credit builds up while the connection is idle.
        var free = clock.now
        while true {
            let count = buffer.withUnsafeMutableBytes { read(source, $0.baseAddress, $0.count) }
            guard count > 0 else { break }
            var offset = 0
            while offset < count {
                let written = buffer.withUnsafeBytes {
                    write(destination, $0.baseAddress! + offset, count - offset)
                }
                guard written > 0 else {
                    shutdown(source, Int32(SHUT_RDWR))
                    return
                }
                offset += written
                if limited {
                    delivered.add(written, ordering: .relaxed)
                    // Wait until the link would have carried what was sent.
                    free = max(free, clock.now) + .seconds(Double(written) / Double(bytesPerSecond))
                    let wait = free - clock.now
                    if wait > .zero { Thread.sleep(forTimeInterval: wait.seconds) }
                }
            }
        }
        shutdown(destination, Int32(SHUT_WR))
    }
}

/// How many directions of a proxied connection have ended.
private final class EndCount: Sendable {
    let count = Atomic<Int>(0)
}
