import Foundation

extension FileManager {
    /// Copies every file of a seeded store's folder into `folder`, except those whose names end with `suffix` (a
    /// file the engine makes afresh, such as LMDB's lock file or SQLite's `-shm`), and syncs each copy: so the
    /// kernel isn't still writing the copy back while a timed migration runs, nor does the migration's commit
    /// sync it.
    func copyStore(from seed: URL, to folder: URL, skipping suffix: String) throws {
        for name in try contentsOfDirectory(atPath: seed.path) where !name.hasSuffix(suffix) {
            let copy = folder.appendingPathComponent(name)
            try copyItem(at: seed.appendingPathComponent(name), to: copy)
            let handle = try FileHandle(forUpdating: copy)
            try handle.synchronize()
            try handle.close()
        }
    }
}
