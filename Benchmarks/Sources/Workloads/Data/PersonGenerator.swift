/// Makes the records of a workload from a seed: record `id` is a pure function of the seed and `id`, so any
/// expected result (a lookup, a count, a checksum) can be computed from the generator alone, without storing it.
///
/// Ids run from 1 to ``count``. Names repeat: record `id` has name number `(id - 1) % distinctNames`, so a lookup by
/// name finds every ``distinctNames``-th record — about 20 of them.
public struct PersonGenerator: Sendable {
    /// The seed every workload of a run derives from.
    public static let defaultSeed: UInt64 = 0x5EED_CAFE_F00D_0001

    public let seed: UInt64
    public let count: Int
    /// How many different names there are: `count / 20`, at least 1.
    public let distinctNames: Int

    public init(count: Int, seed: UInt64 = PersonGenerator.defaultSeed) {
        precondition(count >= 1, "a workload needs at least one record (programmer error)")
        self.seed = seed
        self.count = count
        distinctNames = max(1, count / 20)
    }

    /// Every record, generated on demand: `create` can stream a million of them without an array.
    public var people: LazyMapSequence<ClosedRange<Int64>, Person> {
        (1...Int64(count)).lazy.map { person(id: $0) }
    }

    /// The record with this id.
    public func person(id: Int64) -> Person {
        var random = SplitMix64(seed: seed ^ (UInt64(bitPattern: id) &* 0xD1B5_4A32_D192_ED03))
        let nameNumber = Int((id - 1) % Int64(distinctNames))
        let emailStem = Self.letters(8, &random)
        let email = emailStem + "." + String(id) + "@bench.test"
        let age = 18 + random.next(below: 80)
        let score = Double(random.next() >> 11) / Double(1 << 53) * 1000
        let bio = Self.letters(100, &random, spaces: true)
        return Person(id: id, name: name(number: nameNumber), email: email, age: age, score: score, bio: bio)
    }

    /// Name number `number` (0 ..< distinctNames): 12 letters, unique per number (the first five spell it in base
    /// 26), the rest from the seed.
    public func name(number: Int) -> String {
        var digits: [UInt8] = []
        var rest = number
        for _ in 0..<5 {
            digits.append(UInt8(ascii: "a") + UInt8(rest % 26))
            rest /= 26
        }
        digits[0] -= 32  // capitalized
        var random = SplitMix64(seed: seed ^ 0x4E41_4D45 ^ (UInt64(number) &* 0x9E37_79B9_7F4A_7C15))
        return String(decoding: digits, as: UTF8.self) + Self.letters(7, &random)
    }

    /// The ids of the records named `name(number:)`, in id order.
    public func ids(withNameNumber number: Int) -> StrideThrough<Int64> {
        stride(from: Int64(number + 1), through: Int64(count), by: distinctNames)
    }

    /// `count` ids drawn from the seed (with repeats), for random point lookups.
    public func randomIDs(_ count: Int, stream: UInt64 = 1) -> [Int64] {
        var random = SplitMix64(seed: seed ^ (0x1D5 &* stream))
        return (0..<count).map { _ in Int64(random.next(below: self.count)) + 1 }
    }

    /// `count` name numbers drawn from the seed (with repeats), for lookups by name.
    public func randomNameNumbers(_ count: Int, stream: UInt64 = 2) -> [Int] {
        var random = SplitMix64(seed: seed ^ (0x4A3E &* stream))
        return (0..<count).map { _ in random.next(below: distinctNames) }
    }

    /// The checksum of every record, computed as they stream by.
    public func checksum(transform: (Person) -> Person = { $0 }) -> Checksum {
        var checksum = Checksum()
        for id in 1...Int64(count) { checksum.add(transform(person(id: id))) }
        return checksum
    }

    private static func letters(_ count: Int, _ random: inout SplitMix64, spaces: Bool = false) -> String {
        let alphabet: UInt64 = spaces ? 27 : 26
        var bytes = [UInt8](repeating: 0, count: count)
        var bits = random.next()
        var left = 8
        for index in 0..<count {
            if left == 0 {
                bits = random.next()
                left = 8
            }
            let letter = UInt8((bits & 0xFF) % alphabet)
            bytes[index] = letter == 26 ? UInt8(ascii: " ") : UInt8(ascii: "a") + letter
            bits >>= 8
            left -= 1
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
