import RawLMDB

extension RawLMDBStore {
    /// The raw migration of M2 and S8 on LMDB, in one write transaction: reads every record, opens it, decodes it
    /// into a ``Person``, makes the version-2 `Record` of it (M2: `about` where `bio` was — the encoding is
    /// positional, so the rename is the field moving to the new type — and `karma` appended; S8: `score` in
    /// hundredths, `email` left out, `karma` appended), encodes that, seals it again (with a fresh nonce when
    /// sealed) and puts it back in place with `mdb_cursor_put(MDB_CURRENT)`, then commits. The `name` index is left
    /// as it is: neither the name nor the key changes. Returns how many records were rewritten.
    func migrate<Record: MigratedRecord>(to type: Record.Type, sampler: MigrationSampler? = nil) throws -> Int {
        let dbi = environment.dbi
        var buffer: [UInt8] = []
        buffer.reserveCapacity(512)
        return try environment.write { transaction in
            var cursor: OpaquePointer?
            try RawLMDBError.check(mdb_cursor_open(transaction, dbi, &cursor), "mdb_cursor_open")
            defer { mdb_cursor_close(cursor) }
            var key = MDB_val()
            var value = MDB_val()
            var count = 0
            var code = mdb_cursor_get(cursor, &key, &value, MDB_FIRST)
            while code == MDB_SUCCESS {
                let id = try PersonCodec.id(UnsafeRawBufferPointer(start: key.mv_data, count: key.mv_size))
                let person = try cipher.opened(UnsafeRawBufferPointer(start: value.mv_data, count: value.mv_size)) {
                    try PersonCodec.decode(id: id, $0)
                }
                guard let record = Record.migrated(from: person) else { throw PersonCodec.Malformed() }
                Record.encode(record, into: &buffer)
                // The key is copied out of the map: the put may move the page it points into.
                var keyBits = PersonCodec.key(id)
                try withUnsafeMutableBytes(of: &keyBits) { keyBytes in
                    try cipher.sealed(buffer) { sealed in
                        var keyValue = MDB_val(mv_size: keyBytes.count, mv_data: keyBytes.baseAddress)
                        var newValue = MDB_val(
                            mv_size: sealed.count, mv_data: UnsafeMutableRawPointer(mutating: sealed.baseAddress))
                        try RawLMDBError.check(
                            mdb_cursor_put(cursor, &keyValue, &newValue, UInt32(MDB_CURRENT)), "mdb_cursor_put")
                    }
                }
                count += 1
                if count % 1024 == 0 { sampler?.sample() }
                code = mdb_cursor_get(cursor, &key, &value, MDB_NEXT)
            }
            guard code == MDB_NOTFOUND else { throw RawLMDBError(code: code, context: "mdb_cursor_get") }
            sampler?.endPass()
            return count
        }
    }

    /// Calls `body` with every record of a migrated store, in key order, decoded in the version-2 layout.
    func forEachMigrated<Record: MigratedRecord>(_ type: Record.Type, _ body: (Record) throws -> Void) throws {
        let dbi = environment.dbi
        try environment.read { transaction in
            try RawLMDBEnvironment.forEach(in: transaction, dbi) { key, value in
                let id = try PersonCodec.id(UnsafeRawBufferPointer(start: key.mv_data, count: key.mv_size))
                try body(
                    cipher.opened(UnsafeRawBufferPointer(start: value.mv_data, count: value.mv_size)) {
                        try Record.decode(id: id, $0)
                    })
            }
        }
    }
}
