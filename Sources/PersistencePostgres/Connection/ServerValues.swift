import Foundation
import NIOCore
import PersistenceCore
import PostgresNIO

extension PostgresBindings {
    /// Binds a stored value: integers as `int8`, reals as `float8`, blobs as `bytea`, `null` as null; text as `bytea`
    /// holding its UTF-8 (how the typed tables store it) or, for raw SQL, as `text`.
    mutating func append(_ value: Value, textAsBytes: Bool) {
        switch value {
        case .null: appendNull()
        case .integer(let integer): append(integer)
        case .real(let real): append(real)
        case .text(let text):
            if textAsBytes {
                append(ByteBuffer(string: text))
            } else {
                append(text)
            }
        case .blob(let data): append(ByteBuffer(bytes: data))
        }
    }
}

extension PostgresData {
    /// A stored value bound as the typed tables store it (text as UTF-8 `bytea`).
    init(typed value: Value) {
        switch value {
        case .null: self = .null
        case .integer(let integer): self.init(int64: integer)
        case .real(let real): self.init(double: real)
        case .text(let text): self.init(bytes: text.utf8)
        case .blob(let data): self.init(bytes: data)
        }
    }
}

extension PostgresData {
    /// A `real[]` of `elements` in the server's binary form: one dimension, from 1, no nulls; each element's IEEE 754
    /// bits as they are.
    init(realArray elements: [Float]) {
        var buffer = ByteBufferAllocator().buffer(capacity: 20 + elements.count * 8)
        buffer.writeInteger(Int32(1))  // dimensions
        buffer.writeInteger(Int32(0))  // no null elements
        buffer.writeInteger(PostgresDataType.float4.rawValue)
        buffer.writeInteger(Int32(elements.count))
        buffer.writeInteger(Int32(1))  // the lower bound
        for element in elements {
            buffer.writeInteger(Int32(4))
            buffer.writeInteger(element.bitPattern)
        }
        self.init(type: .float4Array, formatCode: .binary, value: buffer)
    }
}

extension Value {
    /// A value from a cell of a typed table, read as the attribute's storage class says (text is UTF-8 in `bytea`).
    ///
    /// postgres-nio always asks for results in binary form (its Bind message says so for every column), so the
    /// bytes are read as binary whatever format the cell reports — a prepared statement's cells report the text
    /// format of the statement's description, not the binary they arrive in.
    init(_ cell: PostgresCell, as storageClass: StorageClass) throws {
        guard let bytes = cell.bytes else {
            self = .null
            return
        }
        let view = bytes.readableBytesView
        func bigEndian(_ width: Int) -> UInt64? {
            guard view.count == width else { return nil }
            return view.reduce(0) { $0 << 8 | UInt64($1) }
        }
        switch (storageClass, cell.dataType) {
        case (.integer, .int8):
            guard let bits = bigEndian(8) else { break }
            self = .integer(Int64(bitPattern: bits))
            return
        case (.integer, .int4):
            guard let bits = bigEndian(4) else { break }
            self = .integer(Int64(Int32(bitPattern: UInt32(bits))))
            return
        case (.integer, .int2):
            guard let bits = bigEndian(2) else { break }
            self = .integer(Int64(Int16(bitPattern: UInt16(bits))))
            return
        case (.integer, .bool):
            guard let bits = bigEndian(1) else { break }
            self = .integer(bits == 0 ? 0 : 1)
            return
        case (.real, .float8):
            guard let bits = bigEndian(8) else { break }
            self = .real(Double(bitPattern: bits))
            return
        case (.real, .float4):
            guard let bits = bigEndian(4) else { break }
            self = .real(Double(Float(bitPattern: UInt32(bits))))
            return
        case (.text, .bytea), (.text, .text), (.text, .varchar), (.text, .name):
            guard let text = String(validating: view, as: UTF8.self) else {
                throw PersistenceError(.corrupt, "a stored text value is not valid UTF-8")
            }
            self = .text(text)
            return
        case (.blob, .bytea):
            self = .blob(Data(view))
            return
        default:
            break
        }
        throw PersistenceError(
            .corrupt, "a column holds \(cell.dataType) where the model stores \(storageClass.rawValue) values")
    }

    /// A value from a cell of any query, by its PostgreSQL type: integer types as integers, floating point as reals,
    /// `bool` as 0/1, `bytea` as a blob, `NULL` as null, anything else as its text.
    init(_ cell: PostgresCell) throws {
        guard cell.bytes != nil else {
            self = .null
            return
        }
        switch cell.dataType {
        case .int2, .int4, .int8: self = .integer(try cell.decode(Int64.self))
        case .float4, .float8: self = .real(try cell.decode(Double.self))
        case .bool: self = .integer(try cell.decode(Bool.self) ? 1 : 0)
        case .bytea:
            var buffer = try cell.decode(ByteBuffer.self)
            self = .blob(Data(buffer.readBytes(length: buffer.readableBytes) ?? []))
        default: self = .text(try cell.decode(String.self))
        }
    }
}

extension PostgresRow {
    /// The row's values, read as `classes` say, into `values` (reusing its storage).
    func read(as classes: [StorageClass], into values: inout [Value]) throws {
        values.removeAll(keepingCapacity: true)
        var index = 0
        for cell in self {
            values.append(try Value(cell, as: classes[index]))
            index += 1
        }
    }

    /// The row's values by their PostgreSQL types.
    func values() throws -> [Value] { try map { try Value($0) } }
}
