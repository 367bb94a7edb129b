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

extension Value {
    /// A value from a cell of a typed table, read as the attribute's storage class says (text is UTF-8 in `bytea`).
    init(_ cell: PostgresCell, as storageClass: StorageClass) throws {
        guard let bytes = cell.bytes else {
            self = .null
            return
        }
        switch storageClass {
        case .integer: self = .integer(try cell.decode(Int64.self))
        case .real: self = .real(try cell.decode(Double.self))
        case .text:
            guard cell.dataType == .bytea, cell.format == .binary else {
                self = .text(try cell.decode(String.self))
                return
            }
            guard let text = String(validating: bytes.readableBytesView, as: UTF8.self) else {
                throw PersistenceError(.corrupt, "a stored text value is not valid UTF-8")
            }
            self = .text(text)
        case .blob:
            guard cell.dataType == .bytea, cell.format == .binary else {
                var buffer = try cell.decode(ByteBuffer.self)
                self = .blob(Data(buffer.readBytes(length: buffer.readableBytes) ?? []))
                return
            }
            self = .blob(Data(bytes.readableBytesView))
        }
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
