@_spi(PersistenceBackend) import PersistenceCore
import Testing

/// A server's writers commit concurrently and publish as each finishes: the hub passes their publications on in the
/// order they took their tickets (just before sending `COMMIT`), holding back one whose predecessor hasn't finished.
struct CommitOrderTests {
    struct Note: Entity {
        var id: Int64
        var text: String
    }

    static func recorder(inserting key: Int64) throws -> ChangeRecorder {
        let recorder = ChangeRecorder(recordsKeys: true)
        recorder.record(.insert, try SchemaCache.layout(for: Note.self), key: .integer(key))
        return recorder
    }

    @Test func publicationsArriveInTicketOrderWhateverOrderTheyFinishIn() async throws {
        let hub = ObservationHub()
        var changes = ObservedChanges<Note>(hub: hub).makeAsyncIterator()
        let first = hub.reserveTicket()
        let second = hub.reserveTicket()
        let third = hub.reserveTicket()
        let fourth = hub.reserveTicket()

        // The third and second finish before the first: held back.
        hub.publish(try Self.recorder(inserting: 3), ticket: third)
        hub.publish(try Self.recorder(inserting: 2), ticket: second)
        #expect(hub.sequence == 0, "published before an earlier commit finished")
        // The first finishes: all three go, in ticket order.
        hub.publish(try Self.recorder(inserting: 1), ticket: first)
        #expect(hub.sequence == 3)
        // A failed commit hands its ticket back with nothing: the next one isn't held back by it.
        let fifth = hub.reserveTicket()
        hub.publish(try Self.recorder(inserting: 5), ticket: fifth)
        #expect(hub.sequence == 3)
        hub.publish(nil, ticket: fourth)
        #expect(hub.sequence == 4)

        var heard: [[Int64]] = []
        for _ in 0..<4 {
            guard let change = await changes.next() else { break }
            heard.append(change.inserted)
        }
        #expect(heard == [[1], [2], [3], [5]])
    }
}
