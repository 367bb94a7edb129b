public import Foundation
import PersistenceCore
import PersistenceLMDB
import PersistenceSQLite

/// The stores the T workloads hand to the `persistence` tool, made by the library as an app makes them: the S
/// workloads' SQLite store (`ours.sqlite`, what ``OursSQLiteSubject`` writes) and L1's encrypted LMDB store
/// (`ours.lmdb`, what ``OursEncryptedLMDBSubject`` writes), each filled in one transaction from the generator's
/// records, streamed.
public enum ToolStores {
    /// The encrypted LMDB store's passphrase: the tool reads it from an environment variable
    /// (`--passphrase-env`), never from its command line.
    public static var passphrase: String { OursLMDBSubject.passphrase }

    /// Writes `generator`'s records to a new SQLite store in `directory`; returns the store's file.
    public static func sqlite(in directory: URL, generator: PersonGenerator) throws -> URL {
        try OursSQLiteSubject(directory: directory).insert(streaming: generator.people)
        return directory.appendingPathComponent("ours.sqlite")
    }

    /// Writes `generator`'s records to a new encrypted LMDB store in `directory`; returns the store's file.
    public static func encryptedLMDB(in directory: URL, generator: PersonGenerator) throws -> URL {
        try OursEncryptedLMDBSubject(directory: directory).db.write { context in
            try context.create(generator.people)
        }
        return directory.appendingPathComponent("ours.lmdb")
    }
}
