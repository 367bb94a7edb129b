public import Foundation

/// A fixed-dimension vector of `Float` — an embedding — stored in a `Data` attribute that the entity declares as a
/// vector (``Entity/vectorAttributes``), and searched by distance with ``NearestNeighbours`` in a ``Query``.
///
/// ```swift
/// struct Passage: Entity {
///     var id: Int
///     var text: String
///     var embedding: Vector
///     static let vectorAttributes: [VectorAttribute] = [.init("embedding", dimensions: 384)]
/// }
/// ```
///
/// Stored as its elements' IEEE 754 single-precision bytes, little-endian, one after another (4 bytes a
/// dimension) on every backend: export, import, copy and hash carry the bytes exactly. Elements must be finite:
/// a write of a vector holding NaN or an infinity is refused (``PersistenceError/Code/invalidValue``), as is one
/// of another dimension than its attribute's.
public struct Vector: Sendable, Hashable, Codable, StoredAttribute {
    /// The elements, one per dimension.
    public var elements: [Float]

    /// A vector of these elements.
    public init(_ elements: [Float]) { self.elements = elements }

    /// A vector of these elements.
    public init(_ elements: some Sequence<Float>) { self.elements = Array(elements) }

    /// The number of dimensions.
    public var dimensions: Int { elements.count }

    /// The stored bytes: each element's bits, little-endian.
    public var storedValue: Value { .blob(storedBytes) }

    /// The elements' bytes as stored.
    public var storedBytes: Data {
        var data = Data(count: elements.count * 4)
        data.withUnsafeMutableBytes { bytes in
            for (offset, element) in elements.enumerated() {
                bytes.storeBytes(of: element.bitPattern.littleEndian, toByteOffset: offset * 4, as: UInt32.self)
            }
        }
        return data
    }

    /// The vector whose stored bytes are `data`; `nil` when their count isn't a multiple of 4.
    public init?(storedBytes data: Data) {
        guard data.count % 4 == 0 else { return nil }
        elements = data.withUnsafeBytes { bytes in
            (0..<data.count / 4).map { offset in
                Float(
                    bitPattern: UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: offset * 4, as: UInt32.self)))
            }
        }
    }

    /// A stored vector: a blob of 4 bytes a dimension.
    public init?(storedValue: Value) {
        guard case .blob(let data) = storedValue else { return nil }
        self.init(storedBytes: data)
    }

    /// Outside a record (a `Codable` value of the app's own, JSON), a vector is its array of elements.
    public init(from decoder: any Decoder) throws {
        elements = try decoder.singleValueContainer().decode([Float].self)
    }

    /// Outside a record, a vector encodes as its array of elements.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(elements)
    }
}

/// An attribute that holds a ``Vector`` of a fixed number of dimensions (``Entity/vectorAttributes``): writes of
/// another dimension are refused, and queries rank its records by distance (``NearestNeighbours``).
public struct VectorAttribute: Sendable, Hashable, Codable {
    /// The attribute: a `Vector` (stored as `Data`), optional or not — a record whose vector is `nil` is never a
    /// nearest neighbour.
    public var attribute: String
    /// The vectors' dimensions, at least 1.
    public var dimensions: Int

    /// Declares `attribute` a vector of `dimensions` dimensions.
    public init(_ attribute: String, dimensions: Int) {
        self.attribute = attribute
        self.dimensions = dimensions
    }
}

extension EntityDescription {
    /// Checks each declared vector attribute: a `Data` attribute of the entity, declared once, of at least one
    /// dimension.
    package func validateVectorAttributes() throws {
        var seen = Set<String>()
        for vector in vectorAttributes {
            guard let attribute = attribute(named: vector.attribute) else {
                throw PersistenceError(
                    .unknownAttribute,
                    "entity '\(name)' declares unknown attribute '\(vector.attribute)' a vector")
            }
            guard attribute.type == .data else {
                throw PersistenceError(
                    .invalidSchema,
                    "'\(name).\(vector.attribute)' (\(attribute.type.rawValue)) can't be a vector: declare it a Vector")
            }
            guard seen.insert(vector.attribute).inserted else {
                throw PersistenceError(.invalidSchema, "entity '\(name)' declares '\(vector.attribute)' a vector twice")
            }
            guard vector.dimensions >= 1, vector.dimensions <= VectorAttribute.maximumDimensions else {
                throw PersistenceError(
                    .invalidSchema,
                    "the vector '\(name).\(vector.attribute)' has \(vector.dimensions) dimensions "
                        + "(1 to \(VectorAttribute.maximumDimensions))")
            }
        }
    }
}

extension VectorAttribute {
    /// The most dimensions a vector may have (PostgreSQL's arrays and every backend's records hold that many).
    public static let maximumDimensions = 65_536
}

/// A declared vector attribute of a layout: where its values sit, and how many bytes they hold.
@_spi(PersistenceBackend) public struct VectorLayout: Sendable, Hashable {
    /// The attribute's position in the layout.
    @_spi(PersistenceBackend) public let position: Int
    /// The declared dimensions.
    @_spi(PersistenceBackend) public let dimensions: Int
    /// The attribute's name.
    @_spi(PersistenceBackend) public let name: String

    /// A stored value's problem as this attribute's vector, or `nil` when it is one (or `nil`): a blob of 4 bytes a
    /// declared dimension, every element finite.
    func problem(with value: Value, entity: String) -> String? {
        switch value {
        case .null:
            return nil
        case .blob(let data):
            guard data.count == dimensions * 4 else {
                return "'\(entity).\(name)' is a vector of \(dimensions) dimensions; "
                    + (data.count % 4 == 0
                        ? "one of \(data.count / 4) was given" : "\(data.count) bytes are no vector")
            }
            let finite = data.withUnsafeBytes { bytes in
                // An element is finite unless its exponent bits are all ones.
                (0..<dimensions).allSatisfy { offset in
                    bytes.loadUnaligned(fromByteOffset: offset * 4, as: UInt32.self).littleEndian & 0x7F80_0000
                        != 0x7F80_0000
                }
            }
            return finite ? nil : "'\(entity).\(name)' holds NaN or an infinity, which no distance can rank"
        default:
            return "'\(entity).\(name)' is a vector, stored as bytes; a \(value.storageClassName) value was given"
        }
    }
}

extension RecordLayout {
    /// Checks the values of a record about to be written against the entity's vector attributes.
    /// - Throws: ``PersistenceError/Code/invalidValue`` naming the attribute.
    @inline(__always)
    package func checkVectors(_ values: [Value]) throws {
        guard !vectors.isEmpty else { return }
        for vector in vectors {
            if let problem = vector.problem(with: values[vector.position], entity: entity.name) {
                throw PersistenceError(.invalidValue, problem)
            }
        }
    }

    /// The problem of a stored record's vectors, for `verify()`; `nil` when they are sound.
    package func vectorProblem(in values: [Value]) -> String? {
        for vector in vectors {
            if let problem = vector.problem(with: values[vector.position], entity: entity.name) { return problem }
        }
        return nil
    }
}
