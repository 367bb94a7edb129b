/// Nearest neighbours in a ``Query``: the records whose vector attribute (``Entity/vectorAttributes``) is nearest
/// `vector` by `metric`, nearest first — exact, every selected record compared.
///
/// ```swift
/// let query = Query(
///     where: Field("published") == true, nearest: .to(question, in: "embedding", by: .cosine), limit: 10)
/// let passages: [Passage] = try db.recover(Passage.self, query: query)
/// let neighbours = try db.nearest(Passage.self, query)      // with distances
/// ```
///
/// The query's condition selects the records first, then they are ranked (filter, then rank); its offset and
/// limit take a window of the ranking. A record whose vector is `nil` is never a neighbour. Records at equal
/// distance come in primary-key order.
///
/// **Distances** are computed in `Double` from the stored `Float` elements, each sum taken in dimension order from
/// zero, so every backend gives the same distances to the last bit and the same records in the same order:
/// - ``VectorMetric/cosine``: `1 − a·b / (√(a·a) · √(b·b))` (1 when either vector is all zeros);
/// - ``VectorMetric/dotProduct``: `−a·b` (the largest product nearest);
/// - ``VectorMetric/euclidean``: `√Σ(aᵢ − bᵢ)²`.
public struct NearestNeighbours: Sendable, Hashable {
    /// The vector attribute compared.
    public var attribute: String
    /// The vector the records are compared with: of the attribute's dimensions, its elements finite.
    public var vector: Vector
    /// How distance is measured.
    public var metric: VectorMetric

    /// The records nearest `vector` in `attribute` by `metric`.
    public init(_ vector: Vector, in attribute: String, by metric: VectorMetric = .cosine) {
        self.vector = vector
        self.attribute = attribute
        self.metric = metric
    }

    /// The records nearest `vector` in `attribute` by `metric`.
    public static func to(_ vector: Vector, in attribute: String, by metric: VectorMetric = .cosine)
        -> NearestNeighbours
    {
        NearestNeighbours(vector, in: attribute, by: metric)
    }
}

/// How the distance between two vectors is measured (``NearestNeighbours``).
public enum VectorMetric: String, Sendable, Hashable, Codable, CaseIterable {
    /// One minus the cosine of their angle: 0 for the same direction, 2 for opposite ones.
    case cosine
    /// The negated dot product: for vectors of unit length, ranks as cosine does.
    case dotProduct
    /// The straight-line (L2) distance.
    case euclidean
}

/// A record a nearest-neighbours query found, with its distance (``NearestNeighbours``).
public struct Neighbour<E: Entity> {
    /// The record.
    public var record: E
    /// Its vector's distance to the query's, by the query's metric.
    public var distance: Double

    /// A neighbour.
    public init(record: E, distance: Double) {
        self.record = record
        self.distance = distance
    }
}

extension Neighbour: Sendable where E: Sendable {}

/// The distance of stored vectors to a query's vector, defined once for every backend: sums in `Double`, in
/// dimension order, from zero.
@_spi(PersistenceBackend) public struct VectorDistance: Sendable {
    /// The metric.
    @_spi(PersistenceBackend) public let metric: VectorMetric
    /// The query's elements, as doubles.
    @_spi(PersistenceBackend) public let query: [Double]
    /// √(q·q), for cosine.
    @_spi(PersistenceBackend) public let queryNorm: Double

    /// The distance to `vector` by `metric`.
    /// - Throws: ``PersistenceError/Code/invalidArgument`` for a vector with a non-finite element.
    package init(to vector: Vector, metric: VectorMetric) throws {
        guard vector.elements.allSatisfy(\.isFinite) else {
            throw PersistenceError(.invalidArgument, "a nearest-neighbours vector holds NaN or an infinity")
        }
        self.metric = metric
        query = vector.elements.map(Double.init)
        var squares = 0.0
        for element in query { squares += element * element }
        queryNorm = squares.squareRoot()
    }

    /// The distance by the metric from the sums over the dimensions: `dot` = Σ aᵢbᵢ, `squares` = Σ aᵢ² (the
    /// record's), `differences` = Σ (aᵢ − bᵢ)².
    @inline(__always)
    @_spi(PersistenceBackend) public func distance(dot: Double, squares: Double, differences: Double) -> Double {
        switch metric {
        case .cosine:
            let norms = squares.squareRoot() * queryNorm
            return norms == 0 ? 1 : 1 - dot / norms
        case .dotProduct:
            return -dot
        case .euclidean:
            return differences.squareRoot()
        }
    }

    /// The element at `index` of stored vector bytes.
    @inline(__always)
    static func element(_ bytes: UnsafeRawBufferPointer, _ index: Int) -> Float {
        Float(bitPattern: UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: index &* 4, as: UInt32.self)))
    }
}

/// Stored vectors gathered eight at a time, so that one pass over the dimensions computes eight distances: each
/// lane's sums are taken in dimension order as `VectorDistance` defines them — the same doubles as one vector at a
/// time, without each addition waiting on the one before. A lane reads its vector where the storage holds it when
/// those bytes outlast the scan's call (LMDB's map, SQLite's copy in memory), else from a copy kept here.
final class VectorBatch {
    static let width = 8
    private let dimensions: Int
    /// Room for eight copied vectors, `dimensions * 4` bytes each; an unused lane reads its slot, whatever it holds.
    private let copies: UnsafeMutableRawPointer
    /// Where each lane's vector is: in place, or its slot of `copies`.
    private let lanes: UnsafeMutablePointer<UnsafeRawPointer>
    private(set) var keys: [Value] = []

    init(dimensions: Int) {
        self.dimensions = dimensions
        let bytes = Swift.max(dimensions, 1) &* 4 &* Self.width
        copies = UnsafeMutableRawPointer.allocate(byteCount: bytes, alignment: 64)
        copies.initializeMemory(as: UInt8.self, repeating: 0, count: bytes)
        lanes = UnsafeMutablePointer.allocate(capacity: Self.width)
        lanes.initialize(repeating: UnsafeRawPointer(copies), count: Self.width)
        keys.reserveCapacity(Self.width)
    }

    deinit {
        copies.deallocate()
        lanes.deallocate()
    }

    var isFull: Bool { keys.count == Self.width }

    /// Adds a stored vector (of the batch's dimensions) and its record's key: read where it is when `lasting` (the
    /// bytes stay valid until the batch is taken, nothing written before), else copied.
    func add(key: Value, bytes: UnsafeRawBufferPointer, lasting: Bool) {
        let lane = keys.count
        if lasting {
            lanes[lane] = bytes.baseAddress.unsafelyUnwrapped
        } else {
            let slot = copies.advanced(by: lane &* dimensions &* 4)
            slot.copyMemory(from: bytes.baseAddress.unsafelyUnwrapped, byteCount: dimensions &* 4)
            lanes[lane] = UnsafeRawPointer(slot)
        }
        keys.append(key)
    }

    /// Hands `ranked` each vector added, in order, with its distance; the batch is then empty.
    func take(_ distance: VectorDistance, _ ranked: (Value, Double) -> Void) {
        guard !keys.isEmpty else { return }
        // Unused lanes read their slots of the copies: their sums are computed and never handed out.
        for lane in keys.count..<Self.width {
            lanes[lane] = UnsafeRawPointer(copies.advanced(by: lane &* dimensions &* 4))
        }
        var dot = SIMD8<Double>()
        var squares = SIMD8<Double>()
        var differences = SIMD8<Double>()
        let dimensions = dimensions
        let (p0, p1, p2, p3) = (lanes[0], lanes[1], lanes[2], lanes[3])
        let (p4, p5, p6, p7) = (lanes[4], lanes[5], lanes[6], lanes[7])
        distance.query.withUnsafeBufferPointer { query in
            @inline(__always)
            func elements(_ index: Int) -> SIMD8<Double> {
                let offset = index &* 4
                @inline(__always)
                func lane(_ vector: UnsafeRawPointer) -> Double {
                    Double(
                        Float(
                            bitPattern: UInt32(
                                littleEndian: vector.loadUnaligned(fromByteOffset: offset, as: UInt32.self))))
                }
                return SIMD8(lane(p0), lane(p1), lane(p2), lane(p3), lane(p4), lane(p5), lane(p6), lane(p7))
            }
            switch distance.metric {
            case .cosine:
                for index in 0..<dimensions {
                    let element = elements(index)
                    dot += element * query[index]
                    squares += element * element
                }
            case .dotProduct:
                for index in 0..<dimensions { dot += elements(index) * query[index] }
            case .euclidean:
                for index in 0..<dimensions {
                    let difference = elements(index) - query[index]
                    differences += difference * difference
                }
            }
        }
        for lane in keys.indices {
            ranked(
                keys[lane], distance.distance(dot: dot[lane], squares: squares[lane], differences: differences[lane]))
        }
        keys.removeAll(keepingCapacity: true)
    }
}
