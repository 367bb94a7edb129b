/// An order-independent digest of a set of records, over every field: two sets have the same checksum when they
/// hold the same records (up to a 64-bit collision), whatever order a store returns them in.
public struct Checksum: Hashable, Sendable, CustomStringConvertible {
    public private(set) var count = 0
    public private(set) var digest: UInt64 = 0

    public init() {}

    /// A checksum read back from a child process's report.
    public init(count: Int, digest: UInt64) {
        self.count = count
        self.digest = digest
    }

    public init(_ people: some Sequence<Person>) {
        for person in people { add(person) }
    }

    public mutating func add(_ person: Person) {
        add(hash: Self.hash(person))
    }

    /// Adds a record by its hash (for record types other than ``Person``, in extensions).
    mutating func add(hash: UInt64) {
        count += 1
        digest &+= hash
    }

    public var description: String {
        "\(count) records, digest \(String(digest, radix: 16))"
    }

    /// FNV-1a over every field (texts separated by a byte UTF-8 never uses), then a final mix so the sum of many
    /// records keeps the hashes' entropy.
    static func hash(_ person: Person) -> UInt64 {
        var hasher = FieldHasher()
        hasher.mix(UInt64(bitPattern: person.id))
        hasher.mix(person.name)
        hasher.mix(person.email)
        hasher.mix(person.bio)
        hasher.mix(UInt64(bitPattern: Int64(person.age)))
        hasher.mix(person.score.bitPattern)
        return hasher.finalized()
    }

    /// FNV-1a over a record's fields, in the order they are mixed, and the final mix.
    struct FieldHasher {
        private var hash: UInt64 = 0xCBF2_9CE4_8422_2325

        mutating func mix(_ byte: UInt8) {
            hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01B3
        }

        /// Eight bytes, least significant first.
        mutating func mix(_ value: UInt64) {
            for shift in stride(from: 0, to: 64, by: 8) { mix(UInt8(truncatingIfNeeded: value >> UInt64(shift))) }
        }

        /// A text's UTF-8 bytes, then 0xFF (a byte UTF-8 never uses) to end it.
        mutating func mix(_ text: String) {
            for byte in text.utf8 { mix(byte) }
            mix(UInt8(0xFF))
        }

        /// The hash, mixed once more (SplitMix64's finalizer).
        func finalized() -> UInt64 {
            var z = hash
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }
}
