import Foundation
import PersistenceCore

/// Writes one message of the binary form (``SyncBinaryWire``): the body first, names gathered into the table as they
/// come, then the header and table before it.
struct SyncBinaryWriter {
    private var body: [UInt8] = []
    private var table: [String: Int] = [:]
    private var names: [String] = []

    init(capacity: Int) { body.reserveCapacity(capacity) }

    /// The whole message: header, table of names, body.
    consuming func message(_ kind: SyncBinaryWire.Kind) -> [UInt8] {
        var head = SyncBinaryWriter(capacity: 16 + names.reduce(0) { $0 + $1.utf8.count + 1 })
        head.body.append(contentsOf: SyncBinaryWire.magic)
        head.body.append(SyncBinaryWire.version)
        head.body.append(kind.rawValue)
        head.count(names.count)
        for name in names { head.string(name) }
        head.body.append(contentsOf: body)
        return head.body
    }

    mutating func byte(_ byte: UInt8) { body.append(byte) }

    mutating func varint(_ value: UInt64) {
        var value = value
        while value >= 0x80 {
            body.append(UInt8(truncatingIfNeeded: value) | 0x80)
            value >>= 7
        }
        body.append(UInt8(value))
    }

    /// A signed integer, zigzag-coded: small magnitudes of either sign take few bytes.
    mutating func signed(_ value: Int64) {
        varint(UInt64(bitPattern: (value << 1) ^ (value >> 63)))
    }

    mutating func count(_ count: Int) { varint(UInt64(count)) }

    /// `0` for `nil`, else the count plus one.
    mutating func optionalCount(_ count: Int?) {
        if let count { varint(UInt64(count) + 1) } else { byte(0) }
    }

    /// Text in place: its UTF-8 length and bytes.
    mutating func string(_ string: String) {
        var string = string
        string.withUTF8 { utf8 in
            varint(UInt64(utf8.count))
            body.append(contentsOf: utf8)
        }
    }

    /// `0` for `nil`, else the text's UTF-8 length plus one and its bytes.
    mutating func optionalString(_ string: String?) {
        guard var string else { return byte(0) }
        string.withUTF8 { utf8 in
            varint(UInt64(utf8.count) + 1)
            body.append(contentsOf: utf8)
        }
    }

    mutating func data(_ data: Data) {
        varint(UInt64(data.count))
        body.append(contentsOf: data)
    }

    /// A name by its index in the message's table (added the first time it is written).
    mutating func name(_ name: String) {
        if let index = table[name] {
            varint(UInt64(index))
            return
        }
        table[name] = names.count
        varint(UInt64(names.count))
        names.append(name)
    }

    mutating func value(_ value: Value) {
        switch value {
        case .null:
            byte(0)
        case .integer(let integer):
            byte(1)
            signed(integer)
        case .real(let real):
            byte(2)
            withUnsafeBytes(of: real.bitPattern.littleEndian) { body.append(contentsOf: $0) }
        case .text(let text):
            byte(3)
            string(text)
        case .blob(let blob):
            byte(4)
            data(blob)
        }
    }

    mutating func change(_ change: SyncChange) {
        name(change.entity)
        value(change.key)
        signed(change.version)
        guard let values = change.values else { return byte(0) }
        varint(UInt64(values.count) + 1)
        for (attribute, value) in values {
            name(attribute)
            self.value(value)
        }
    }

    mutating func scopes(_ scopes: [SyncScope]?) {
        guard let scopes else { return byte(0) }
        varint(UInt64(scopes.count) + 1)
        for scope in scopes {
            name(scope.name)
            count(scope.parameters.count)
            for (parameter, value) in scope.parameters {
                name(parameter)
                self.value(value)
            }
        }
    }
}

/// Reads one message of the binary form from bytes in place; every read checks the bytes left.
struct SyncBinaryReader {
    private let bytes: UnsafeRawBufferPointer
    private var offset = 0
    private var names: [String] = []

    /// Checks the header (the form, its version, the message's kind) and reads the table of names.
    init(_ bytes: UnsafeRawBufferPointer, kind: SyncBinaryWire.Kind) throws {
        self.bytes = bytes
        let header = SyncBinaryWire.magic.count
        guard bytes.count >= header + 2, bytes.prefix(header).elementsEqual(SyncBinaryWire.magic) else {
            throw SyncBinaryWire.damaged("it doesn't start as one")
        }
        offset = header
        let version = try byte()
        guard version == SyncBinaryWire.version else {
            throw PersistenceError(
                .updateRequired, "a binary sync message is of version \(version), this library reads version 1")
        }
        let found = try byte()
        guard found == kind.rawValue else {
            throw SyncBinaryWire.damaged("a message of kind \(found) where one of kind \(kind.rawValue) was expected")
        }
        let count = try self.count()
        names.reserveCapacity(count)
        for _ in 0..<count { names.append(try string()) }
    }

    /// Checks that the message ends where its last part did.
    func finish() throws {
        guard offset == bytes.count else {
            throw SyncBinaryWire.damaged("\(bytes.count - offset) byte(s) after its end")
        }
    }

    mutating func byte() throws -> UInt8 {
        guard offset < bytes.count else { throw SyncBinaryWire.damaged("it ends early") }
        defer { offset += 1 }
        return bytes[offset]
    }

    @inline(__always)
    mutating func varint() throws -> UInt64 {
        // Nearly every count, length and index is under 128: one byte.
        if offset < bytes.count, bytes[offset] < 0x80 {
            offset += 1
            return UInt64(bytes[offset - 1])
        }
        var result: UInt64 = 0
        for shift in stride(from: 0, to: 64, by: 7) {
            let next = try byte()
            result |= UInt64(next & 0x7F) << UInt64(shift)
            if next < 0x80 { return result }
        }
        throw SyncBinaryWire.damaged("a number longer than 64 bits")
    }

    mutating func signed() throws -> Int64 {
        let raw = try varint()
        return Int64(bitPattern: raw >> 1) ^ -Int64(bitPattern: raw & 1)
    }

    mutating func int() throws -> Int {
        let value = try signed()
        guard let int = Int(exactly: value) else { throw SyncBinaryWire.damaged("a number out of range") }
        return int
    }

    /// A count of parts that follow: each takes at least a byte, so a count beyond the bytes left is damage, found
    /// before anything is allocated for it.
    mutating func count() throws -> Int {
        let count = try varint()
        guard count <= UInt64(bytes.count - offset) else {
            throw SyncBinaryWire.damaged("a count of \(count) with \(bytes.count - offset) byte(s) left")
        }
        return Int(count)
    }

    mutating func optionalCount() throws -> Int? {
        let raw = try varint()
        guard raw > 0 else { return nil }
        guard let count = Int(exactly: raw - 1) else { throw SyncBinaryWire.damaged("a count out of range") }
        return count
    }

    /// `length` bytes in place.
    private mutating func slice(_ length: UInt64) throws -> UnsafeRawBufferPointer {
        guard length <= UInt64(bytes.count - offset) else {
            throw SyncBinaryWire.damaged("a length of \(length) with \(bytes.count - offset) byte(s) left")
        }
        let start = offset
        offset += Int(length)
        return UnsafeRawBufferPointer(rebasing: bytes[start..<offset])
    }

    private mutating func text(_ length: UInt64) throws -> String {
        let utf8 = try slice(length)
        guard let string = String(validating: utf8, as: UTF8.self) else {
            throw SyncBinaryWire.damaged("text that isn't UTF-8")
        }
        return string
    }

    mutating func string() throws -> String { try text(try varint()) }

    mutating func optionalString() throws -> String? {
        let raw = try varint()
        guard raw > 0 else { return nil }
        return try text(raw - 1)
    }

    mutating func data() throws -> Data { Data(try slice(try varint())) }

    mutating func name() throws -> String {
        let index = try varint()
        guard index < UInt64(names.count) else {
            throw SyncBinaryWire.damaged("a name's index \(index) beyond the table's \(names.count)")
        }
        return names[Int(index)]
    }

    mutating func value() throws -> Value {
        switch try byte() {
        case 0: return .null
        case 1: return .integer(try signed())
        case 2:
            let raw = try slice(8)
            var bits: UInt64 = 0
            withUnsafeMutableBytes(of: &bits) { $0.copyMemory(from: raw) }
            let real = Double(bitPattern: UInt64(littleEndian: bits))
            guard !real.isNaN else { throw SyncBinaryWire.damaged("a real that is NaN") }
            return .real(real.canonicalForStorage)
        case 3: return .text(try string())
        case 4: return .blob(try data())
        case let tag: throw SyncBinaryWire.damaged("a value of unknown tag \(tag)")
        }
    }

    mutating func change() throws -> SyncChange {
        let entity = try name()
        let key = try value()
        let version = try signed()
        let raw = try varint()
        guard raw > 0 else { return SyncChange(entity: entity, key: key, values: nil, version: version) }
        guard raw - 1 <= UInt64(bytes.count - offset) else {
            throw SyncBinaryWire.damaged("a record of \(raw - 1) value(s) with \(bytes.count - offset) byte(s) left")
        }
        let count = Int(raw - 1)
        var values: [String: Value] = [:]
        values.reserveCapacity(count)
        for _ in 0..<count {
            let attribute = try name()
            guard values.updateValue(try value(), forKey: attribute) == nil else {
                throw SyncBinaryWire.damaged("a \(entity) record names attribute \(attribute) twice")
            }
        }
        return SyncChange(entity: entity, key: key, values: values, version: version)
    }

    mutating func scopes() throws -> [SyncScope]? {
        let raw = try varint()
        guard raw > 0 else { return nil }
        guard raw - 1 <= UInt64(bytes.count - offset) else {
            throw SyncBinaryWire.damaged("\(raw - 1) scope(s) with \(bytes.count - offset) byte(s) left")
        }
        var scopes: [SyncScope] = []
        for _ in 0..<Int(raw - 1) {
            let name = try self.name()
            var parameters: [String: Value] = [:]
            for _ in 0..<(try count()) {
                let parameter = try self.name()
                guard parameters.updateValue(try value(), forKey: parameter) == nil else {
                    throw SyncBinaryWire.damaged("scope \(name) names parameter \(parameter) twice")
                }
            }
            scopes.append(SyncScope(name, parameters))
        }
        return scopes
    }
}
