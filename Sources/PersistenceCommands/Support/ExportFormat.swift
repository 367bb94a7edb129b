package import Foundation
package import PersistenceCore

/// The first line of a JSON Lines export: what `import` needs to make the store again.
package struct ExportHeader: Codable, Sendable {
    /// Always `persistence-export`.
    package var format = "persistence-export"
    /// The export format's version.
    package var version = 1
    /// The backend the records came from (informative).
    package var backend: String
    package var schemaVersion: Int
    /// The exported entities' schema, as the store holds it.
    package var schema: [EntityDescription]

    package init(backend: String, schemaVersion: Int, schema: [EntityDescription]) {
        self.backend = backend
        self.schemaVersion = schemaVersion
        self.schema = schema
    }
}

/// One record line of a JSON Lines export: `{"entity":"User","record":{"id":1,"name":"Ada"}}`.
package struct ExportLine: Decodable {
    package var entity: String
    package var record: [String: ValueText.Scalar]
}

/// Writes text to a file or standard output through a buffer.
package final class TextOutput {
    private let handle: FileHandle
    private let closes: Bool
    private var buffer: [UInt8] = []

    /// Standard output.
    package init() {
        handle = .standardOutput
        closes = false
    }

    /// A new file (an existing one is refused: an export never replaces a file).
    package init(file: URL) throws {
        guard FileManager.default.createFile(atPath: file.path, contents: nil),
            let handle = try? FileHandle(forWritingTo: file)
        else { throw PersistenceError(.permissionDenied, "\(file.path) can't be written") }
        self.handle = handle
        closes = true
    }

    package func write(_ text: String) throws {
        buffer.append(contentsOf: text.utf8)
        if buffer.count >= 1 << 16 { try flush() }
    }

    package func write(bytes: [UInt8]) throws {
        buffer.append(contentsOf: bytes)
        if buffer.count >= 1 << 16 { try flush() }
    }

    package func flush() throws {
        guard !buffer.isEmpty else { return }
        do {
            try handle.write(contentsOf: buffer)
        } catch {
            throw PersistenceError(.ioFailure, "the output could not be written", underlyingError: error)
        }
        buffer.removeAll(keepingCapacity: true)
    }

    package func close() throws {
        try flush()
        if closes { try handle.close() }
    }
}

/// Reads a file line by line in bounded memory (a line is at most what one record holds).
package struct LineReader: Sequence, IteratorProtocol {
    private let handle: FileHandle
    private var buffer: [UInt8] = []
    private var start = 0
    private var atEnd = false

    package init(file: URL) throws {
        guard let handle = try? FileHandle(forReadingFrom: file) else {
            throw PersistenceError(.notFound, "\(file.path) can't be read")
        }
        self.handle = handle
    }

    package mutating func next() -> [UInt8]? {
        while true {
            if let newline = buffer[start...].firstIndex(of: UInt8(ascii: "\n")) {
                let line = Array(buffer[start..<newline])
                start = newline + 1
                return line
            }
            if atEnd {
                guard start < buffer.count else { return nil }
                let line = Array(buffer[start...])
                start = buffer.count
                return line
            }
            buffer.removeFirst(start)
            start = 0
            let chunk = (try? handle.read(upToCount: 1 << 16)) ?? nil
            if let chunk, !chunk.isEmpty { buffer.append(contentsOf: chunk) } else { atEnd = true }
        }
    }
}

/// Streams records as JSON Lines: the header, then one line per record.
package enum JSONLines {
    /// Writes the header line.
    package static func writeHeader(_ header: ExportHeader, to output: TextOutput) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        guard let text = String(data: try encoder.encode(header), encoding: .utf8) else {
            throw PersistenceError(.invalidArgument, "the export header could not be written")
        }
        try output.write(text + "\n")
    }

    /// Writes one record's line; attributes in the layout's order.
    package static func write(_ record: Record, to output: TextOutput) throws {
        let entity = record.layout.entity
        var line = "{\"entity\":" + ValueText.quoted(entity.name) + ",\"record\":{"
        for (position, attribute) in entity.attributes.enumerated() {
            if position > 0 { line += "," }
            line +=
                ValueText.quoted(attribute.name) + ":" + (try ValueText.json(record.values[position], of: attribute))
        }
        try output.write(line + "}}\n")
    }

    /// The record a line holds, in `layouts`' entity of its name (`decoder`: one for every line of an import).
    /// - Throws: ``PersistenceError/Code/invalidValue`` for a line that isn't a record of the schema: unknown
    ///   entity or attribute, a missing non-optional attribute, a value of the wrong kind.
    package static func record(
        _ line: [UInt8], layouts: [String: RecordLayout], decoder: JSONDecoder = JSONDecoder()
    ) throws -> Record {
        let decoded: ExportLine
        do {
            decoded = try decoder.decode(ExportLine.self, from: Data(line))
        } catch {
            throw PersistenceError(.invalidValue, "the line is not a record line of an export")
        }
        guard let layout = layouts[decoded.entity] else {
            throw PersistenceError(.unknownEntity, "the schema has no entity '\(decoded.entity)'")
        }
        if let unknown = decoded.record.keys.sorted().first(where: { layout.position(of: $0) == nil }) {
            throw PersistenceError(.unknownAttribute, "'\(decoded.entity)' has no attribute '\(unknown)'")
        }
        var record = Record(layout: layout)
        for (position, attribute) in layout.entity.attributes.enumerated() {
            record.values[position] = try ValueText.value(decoded.record[attribute.name] ?? .null, of: attribute)
        }
        return record
    }
}
