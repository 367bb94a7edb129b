import CSV
package import Foundation
package import PersistenceCore

/// Writes one entity's records as CSV (RFC 4180, through CSV.swift): a header row of attribute names, then a row per
/// record in primary-key order. `nil` is an empty field; an empty string is a quoted `""`; other values as in
/// ``ValueText``.
package struct CSVExport {
    private let writer: CSVWriter
    private let stream: BufferedFileStream

    /// Writes to `file`, or to standard output when `nil`.
    package init(file: URL?) throws {
        let path = file?.path ?? "standard output"
        let handle: FileHandle
        if let file {
            if FileManager.default.fileExists(atPath: file.path) {
                throw PersistenceError(.invalidArgument, "\(file.path) exists: an export never replaces a file")
            }
            guard FileManager.default.createFile(atPath: file.path, contents: nil),
                let opened = try? FileHandle(forWritingTo: file)
            else { throw PersistenceError(.permissionDenied, "\(path) can't be written") }
            handle = opened
        } else {
            handle = .standardOutput
        }
        stream = BufferedFileStream(handle: handle, closes: file != nil)
        do {
            writer = try CSVWriter(stream: stream)
        } catch {
            throw PersistenceError(.permissionDenied, "\(path) can't be written", underlyingError: error)
        }
    }

    package func writeHeader(_ layout: RecordLayout) throws {
        try wrapped { try writer.write(row: layout.names) }
    }

    package func write(_ record: Record) throws {
        writer.beginNewRow()
        for (position, attribute) in record.layout.entity.attributes.enumerated() {
            let text = try ValueText.csv(record.values[position], of: attribute)
            try wrapped { try writer.write(field: text ?? "", quoted: text?.isEmpty ?? false) }
        }
    }

    /// Ends the last row and closes the output.
    package func close() throws {
        try wrapped {
            writer.beginNewRow()
            try writer.write(field: "")
        }
        stream.close()
        if let failure = stream.failure {
            throw PersistenceError(.ioFailure, "the CSV output could not be written", underlyingError: failure)
        }
    }

    private func wrapped(_ body: () throws -> Void) throws {
        do {
            try body()
        } catch let error as PersistenceError {
            throw error
        } catch {
            throw PersistenceError(.ioFailure, "the CSV output could not be written", underlyingError: error)
        }
    }
}

/// An output stream that gathers what it is given and writes it to a file 64 KiB at a time: CSV.swift writes each
/// byte with its own call, one system call per byte on a file stream.
private final class BufferedFileStream: OutputStream {
    private let handle: FileHandle
    private let closes: Bool
    private var buffer: [UInt8] = []
    /// The first write that failed.
    private(set) var failure: (any Error)?

    init(handle: FileHandle, closes: Bool) {
        self.handle = handle
        self.closes = closes
        buffer.reserveCapacity(1 << 16)
        super.init(toMemory: ())
    }

    /// Foundation requires it of a subclass; this stream is only made by ``init(handle:closes:)``: a memory stream
    /// that writes to standard output.
    required init(toMemory: ()) {
        handle = .standardOutput
        closes = false
        super.init(toMemory: ())
    }

    override func write(_ bytes: UnsafePointer<UInt8>, maxLength length: Int) -> Int {
        guard failure == nil else { return -1 }
        buffer.append(contentsOf: UnsafeBufferPointer(start: bytes, count: length))
        if buffer.count >= 1 << 16 { flush() }
        return failure == nil ? length : -1
    }

    override var hasSpaceAvailable: Bool { failure == nil }

    override func close() {
        flush()
        if closes { try? handle.close() }
        super.close()
    }

    private func flush() {
        guard failure == nil, !buffer.isEmpty else { return }
        do {
            try handle.write(contentsOf: buffer)
        } catch {
            failure = error
        }
        buffer.removeAll(keepingCapacity: true)
    }
}
