import Foundation
@_spi(PersistenceBackend) import PersistenceCore

/// A per-thread counter (`pthread_key_t`): cheap enough to bump on every read transaction.
///
/// `@unchecked Sendable`: each thread reads and writes only its own slot.
@_spi(PersistenceBackend) public final class ThreadCounter: @unchecked Sendable {
    private var key = pthread_key_t()

    /// A counter at 0 on every thread.
    @_spi(PersistenceBackend) public init() { pthread_key_create(&key, nil) }

    deinit { pthread_key_delete(key) }

    /// The calling thread's count.
    @_spi(PersistenceBackend) public var value: Int { Int(bitPattern: pthread_getspecific(key)) }

    /// Adds one to the calling thread's count.
    @_spi(PersistenceBackend) public func increment() {
        pthread_setspecific(key, UnsafeRawPointer(bitPattern: value + 1))
    }

    /// Takes one from the calling thread's count.
    @_spi(PersistenceBackend) public func decrement() {
        pthread_setspecific(key, UnsafeRawPointer(bitPattern: value - 1))
    }
}
