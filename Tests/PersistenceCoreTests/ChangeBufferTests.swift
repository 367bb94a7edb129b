@_spi(PersistenceBackend) import PersistenceCore
import Testing

/// A change-set observation whose consumer doesn't keep up holds bounded memory: past its limits the buffer becomes
/// one incomplete change set.
struct ChangeBufferTests {
    struct Note: Entity {
        var id: Int64
        var text: String
    }

    static func commit(_ hub: ObservationHub, keys: Range<Int64>) {
        var changes = ChangeSet()
        changes.merge(keys.map { (kind: ChangeKind.insert, key: Value.integer($0)) })
        hub.publish(CommittedChanges(entities: [Note.entityName: changes]))
    }

    @Test func pastTheKeyLimitTheBufferIsOneIncompleteChangeSet() async {
        let hub = ObservationHub()
        var changes = ObservedChanges<Note>(hub: hub).makeAsyncIterator()
        Self.commit(hub, keys: 0..<60_000)
        Self.commit(hub, keys: 60_000..<120_000)  // 120,000 keys buffered: past 100,000
        Self.commit(hub, keys: 120_000..<120_001)  // folded into the incomplete one
        let collapsed = await changes.next()
        #expect(collapsed?.isComplete == false && collapsed?.isEmpty == true)
        Self.commit(hub, keys: 7..<8)
        let next = await changes.next()
        #expect(next?.inserted == [7] && next?.isComplete == true)
    }

    @Test func withinTheLimitsEveryChangeSetIsKept() async {
        let hub = ObservationHub()
        var changes = ObservedChanges<Note>(hub: hub).makeAsyncIterator()
        Self.commit(hub, keys: 0..<50_000)
        Self.commit(hub, keys: 50_000..<99_999)
        #expect(await changes.next()?.inserted.count == 50_000)
        // What was read no longer counts: another 50,000 fit beside the second change set.
        Self.commit(hub, keys: 100_000..<150_000)
        #expect(await changes.next()?.inserted.count == 49_999)
        let third = await changes.next()
        #expect(third?.inserted.count == 50_000 && third?.isComplete == true)
    }
}

extension ChangeBufferTests {
    /// Another process's commit is an incomplete change set too, but no overflow: what follows it is kept.
    @Test func whatFollowsAnExternalCommitIsKept() async {
        let hub = ObservationHub()
        var changes = ObservedChanges<Note>(hub: hub).makeAsyncIterator()
        hub.publish(.external)
        Self.commit(hub, keys: 5..<6)
        #expect(await changes.next()?.isComplete == false)
        #expect(await changes.next()?.inserted == [5])
    }
}
