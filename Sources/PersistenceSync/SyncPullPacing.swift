import PersistenceCore
import Synchronization

/// How large a client asks pulled pages to be: about as many bytes of values as arrive in ``target`` (a page's round
/// trip: the server reading it, the transfer, the decoding), between ``floor`` and ``SyncClient/pullPageBytes``.
///
/// A fast link and server reach the ceiling within a few pages; a slow link keeps pages small, so a connection that
/// drops every few seconds loses at most one small page each time — a 4 MiB page that takes longer to arrive than the
/// connection lasts would never arrive. A lost connection quarters the size (the next pull starts there, its first
/// page too) and caps it at half of what was lost; the cap rises again by an eighth with each page that arrives.
package final class SyncPullPacing: Sendable {
    /// The round trip a page is sized for.
    package static let target = Duration.milliseconds(250)
    /// The fewest bytes of values a page is sized for.
    package static let floor = 64 << 10

    private struct State {
        /// The bytes of values the next page is sized for.
        var budget: Int
        /// The most `budget` may grow to: half the budget a connection was lost at, rising again page by page.
        var cap: Int
        /// The bytes of values per change of the last page (`nil` before one arrived).
        var weight: Int?
        /// The changes a pull's first page holds while no page has arrived.
        var firstChanges = 1_000
    }

    private let state: Mutex<State>
    /// The most bytes of values a page is sized for.
    private let ceiling: Int

    package init(ceiling: Int) {
        self.ceiling = ceiling
        state = Mutex(State(budget: min(ceiling, 1 << 20), cap: ceiling))
    }

    /// The bytes of values the next page is sized for.
    package var bytes: Int { state.withLock { $0.budget } }

    /// The changes the next page holds, at most `maximum`.
    package func pageSize(maximum: Int) -> Int {
        state.withLock { state in
            guard let weight = state.weight else { return min(state.firstChanges, maximum) }
            return max(1, min(maximum, state.budget / weight))
        }
    }

    /// Resizes after a page of `changes` changes with `bytes` bytes of values arrived in `roundTrip`: toward
    /// ``target`` at the rate it arrived, at most doubling or halving at once.
    package func arrived(bytes: Int, changes: Int, in roundTrip: Duration) {
        guard bytes > 0, changes > 0 else { return }
        let seconds = max(Double(roundTrip.components.seconds) + Double(roundTrip.components.attoseconds) / 1e18, 1e-4)
        let target = Double(Self.target.components.attoseconds) / 1e18
        let ceiling = self.ceiling
        state.withLock { state in
            state.weight = max(1, bytes / changes)
            state.cap = min(ceiling, state.cap + state.cap / 8)
            let wanted = Int(min(Double(Int.max / 4), Double(bytes) / seconds * target))
            let next = min(state.budget * 2, max(state.budget / 2, wanted))
            state.budget = max(Self.floor, min(next, state.cap, ceiling))
        }
    }

    /// Shrinks after a connection was lost while a page was on its way.
    package func lost() {
        state.withLock { state in
            state.cap = max(Self.floor, state.budget / 2)
            state.budget = max(Self.floor, state.budget / 4)
            state.firstChanges = max(10, state.firstChanges / 4)
        }
    }

    /// Whether `error` is a lost or unreachable connection (which smaller pages can help).
    static func isConnectionLoss(_ error: any Error) -> Bool {
        guard let error = error as? PersistenceError else { return false }
        return [.connectionLost, .unreachable, .commitOutcomeUnknown].contains(error.code)
    }
}
