internal import CLMDB
import Foundation
import PersistenceCore

extension Transaction {
    /// Whether a sorted-duplicates (`MDB_DUPSORT`) database holds exactly the pair `key`/`value`.
    func contains(_ dbi: MDB_dbi, _ key: Data, _ value: Data) throws -> Bool {
        try withCursor(dbi) { cursor in
            try key.withMDBVal { keyVal in
                try value.withMDBVal { valueVal in
                    let code = mdb_cursor_get(cursor, &keyVal, &valueVal, MDB_GET_BOTH)
                    if code == MDB_NOTFOUND { return false }
                    try LMDBError.check(code, "could not look up an index entry")
                    return true
                }
            }
        }
    }

    /// The names of the environment's named databases: the keys of its main database.
    func databaseNames() throws -> [String] {
        var main = MDB_dbi()
        // A NULL name opens the main database, which exists in every environment and needs no commit to stay open.
        try LMDBError.check(mdb_dbi_open(handle, nil, 0, &main), "could not open the main database")
        var names: [String] = []
        try forEach(main) { key, _ in
            names.append(String(decoding: key, as: UTF8.self))
            return true
        }
        return names
    }
}
