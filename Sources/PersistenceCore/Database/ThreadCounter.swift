import Foundation

/// A per-thread counter (`pthread_key_t`): cheap enough to bump on every read transaction.
///
/// `@unchecked Sendable`: each thread reads and writes only its own slot.
package final class ThreadCounter: @unchecked Sendable {
    private var key = pthread_key_t()

    package init() { pthread_key_create(&key, nil) }

    deinit { pthread_key_delete(key) }

    package var value: Int { Int(bitPattern: pthread_getspecific(key)) }

    package func increment() { pthread_setspecific(key, UnsafeRawPointer(bitPattern: value + 1)) }

    package func decrement() { pthread_setspecific(key, UnsafeRawPointer(bitPattern: value - 1)) }
}
