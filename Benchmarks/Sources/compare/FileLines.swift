import Foundation

/// Reads a file line by line in 1 MiB chunks: the T1 exports' checks, over files of hundreds of megabytes.
enum FileLines {
    /// Calls `body` with each line of `file` without its line feed (and a last line that has none).
    static func forEach(in file: URL, _ body: (ArraySlice<UInt8>) throws -> Void) throws {
        let handle = try FileHandle(forReadingFrom: file)
        defer { try? handle.close() }
        var pending: [UInt8] = []
        while let chunk = try handle.read(upToCount: 1 << 20), !chunk.isEmpty {
            pending.append(contentsOf: chunk)
            var start = pending.startIndex
            while let lineFeed = pending[start...].firstIndex(of: UInt8(ascii: "\n")) {
                try body(pending[start..<lineFeed])
                start = lineFeed + 1
            }
            pending.removeFirst(start)
        }
        if !pending.isEmpty { try body(pending[...]) }
    }
}
