package import PersistenceCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Ctrl-C (and `SIGTERM`) during a long command: the work stops between records and undoes itself — a new store
/// being filled is discarded, a half-written export removed — instead of the process dying with a partial file.
package enum Interruption {
    /// Set by the signal handler; the commands' loops (and the backends' own, through
    /// ``CancellationFlag/current``) check it between records and throw `CancellationError`.
    package static let flag = CancellationFlag()

    /// Catches `SIGINT` and `SIGTERM` from now on; a second one ends the process at once.
    package static func install() {
        let handler: @convention(c) (Int32) -> Void = { signal in
            if Interruption.flag.isCancelled { _exit(128 + signal) }
            Interruption.flag.cancel()
        }
        signal(SIGINT, handler)
        signal(SIGTERM, handler)
    }

    /// Runs `body` with interruption caught and checked by the backends' loops.
    package static func catching<R>(_ body: () throws -> R) rethrows -> R {
        install()
        return try CancellationFlag.withCurrent(flag, body)
    }

    /// Throws `CancellationError` once interrupted.
    @inline(__always)
    package static func check() throws { try flag.check() }
}
