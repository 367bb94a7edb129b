import Foundation
import PersistenceCore

/// An entity with an attribute of every kind the record decoder reads, for feeding it values of the wrong types.
struct FuzzRow: Entity {
    enum Kind: String, Codable, CaseIterable { case small, large }
    enum Level: Int, Codable, CaseIterable {
        case low = 1
        case high = 2
    }
    struct Nested: Codable, Sendable {
        var count: Int
        var names: [String]
    }

    var id: Int64
    var small: Int8
    var unsigned: UInt64
    var flag: Bool
    var ratio: Float
    var real: Double
    var name: String
    var optionalName: String?
    var when: Date
    var uuid: UUID
    var link: URL
    var payload: Data
    var kind: Kind
    var level: Level?
    var nested: Nested
    var list: [Int]?
}
