public import PersistenceCore

/// R1's input, built once before any timing and handed unchanged to every implementation: a store of N records
/// (``stored``, ids 1…N, the generator's) and the snapshot it is reconciled with (``incoming``).
///
/// The snapshot is the N records in id order with every tenth (id divisible by 10) changed — ``Person/updated``: a
/// new age and score, the key and texts unchanged — every twentieth (id ≡ 5 mod 20) left out, so it is deleted, and
/// N / 100 new records (ids N + 1 onwards) appended. The other 85 % are stored exactly as given.
public struct ReconcileInput: Sendable {
    /// The records the store holds before each run.
    public let stored: [Person]
    /// The records the store must hold afterwards.
    public let incoming: [Person]
    /// What a reconcile of ``stored`` with ``incoming`` does, counted as the snapshot is made (never from a store):
    /// N / 100 inserted, the rest as above — 10 % updated and 5 % deleted when N is a multiple of 20.
    public let expected: ChangeCounts
    /// Every record of ``incoming``: what the store must read back.
    public let incomingChecksum: Checksum

    public init(generator: PersonGenerator) {
        stored = Array(generator.people)
        var incoming: [Person] = []
        incoming.reserveCapacity(stored.count + stored.count / 100)
        var expected = ChangeCounts()
        for person in stored {
            if person.id % 20 == 5 {
                expected.deleted += 1
            } else if person.id % 10 == 0 {
                incoming.append(person.updated)
                expected.updated += 1
            } else {
                incoming.append(person)
                expected.unchanged += 1
            }
        }
        let firstNew = Int64(stored.count) + 1
        for id in firstNew..<(firstNew + Int64(stored.count / 100)) {
            incoming.append(generator.person(id: id))
            expected.inserted += 1
        }
        self.incoming = incoming
        self.expected = expected
        incomingChecksum = Checksum(incoming)
    }

    /// Records the snapshot changes (N / 10), leaves out (N / 20) and adds (N / 100), and the stored ones it holds
    /// as they are.
    public var changed: Int { expected.updated }
    public var removed: Int { expected.deleted }
    public var added: Int { expected.inserted }
    public var unchanged: Int { expected.unchanged }
}
