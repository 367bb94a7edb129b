import Foundation
import PersistenceCore
import PersistenceTesting
import Testing

@testable import PersistenceLMDB

/// A damaged key in a branch page: a walk of the leaves still finds every record, while a lookup by key is sent to
/// the wrong child and misses one. `verify()` must report the store unsound then, not leave a read to answer short.
struct DamagedBranchTests {
    struct Row: Entity, Equatable {
        var id: Int64
        var text: String
    }

    @Test func aRecordALookupCannotFindMakesTheStoreUnsound() throws {
        try withTemporaryDirectory { directory in
            var builder = LMDBBuilder.unencrypted(databaseName: "Branch", model: Model(entities: [Row.self]))
            builder.directory = directory
            let count: Int64 = 2_000
            let db = try builder.create()
            try db.create((1...count).map { Row(id: $0, text: "row \($0) with some text to fill the pages") })
            #expect(try db.verify().isSound)
            try db.close()

            // Every branch page whose separator keys are 8 bytes (the rows' Int64 keys; the main database's keys are
            // names): its second separator one larger, so the record that starts that child is searched for in the
            // child before it.
            let file = directory.appendingPathComponent("Branch.lmdb")
            var bytes = [UInt8](try Data(contentsOf: file))
            let pageSize = 4_096
            var damaged = 0
            for page in stride(from: 2 * pageSize, to: bytes.count, by: pageSize) {
                func uint16(_ offset: Int) -> Int { Int(bytes[page + offset]) | Int(bytes[page + offset + 1]) << 8 }
                let flags = uint16(10)
                let lower = uint16(12)
                guard flags & 0x01 != 0, (lower - 16) / 2 >= 2 else { continue }
                let node = page + uint16(16 + 2)  // the second node (the first has an empty key)
                let keySize = Int(bytes[node + 6]) | Int(bytes[node + 7]) << 8
                guard keySize == 8, bytes[node + 8 + 7] < 0xFF else { continue }
                bytes[node + 8 + 7] += 1
                damaged += 1
            }
            try #require(damaged > 0, "no branch page of 8-byte keys in a store of \(count) rows")
            try Data(bytes).write(to: file)

            let reopened = try builder.create()
            let missing = try (1...count).filter { try reopened.recover(Row.self, id: $0) == nil }
            try #require(!missing.isEmpty, "the damage sends no lookup astray")
            let report = try reopened.verify()
            #expect(!report.isSound, "\(missing.count) records a lookup can't find; verify: \(report)")
            #expect(report.problems.contains { $0.kind == .recordUnreadable }, "\(report)")
            try reopened.close()
        }
    }
}
