import Testing

@testable import PersistenceCore

/// What an observed read reports about what it touched, through the core's lookups.
struct ReadTrackerTests {
    struct Book: Entity {
        var id: Int64
    }

    struct Shelf: Entity {
        var id: Int64
        static let entityName = "shelves"
    }

    @Test func lookupsInsideATrackedReadAreNoted() throws {
        let positions = EntityPositions(Model(entities: [Book.self, Shelf.self]))
        let (position, footprint) = try ReadTracker.track {
            _ = try positions.position(of: Shelf.self)
            ReadTracker.noteAlias("current")
            return try positions.position(of: Book.self)
        }
        #expect(position == 0)
        #expect(footprint == ReadFootprint(entities: ["Book", "shelves"], aliases: ["current"]))
        let raw = ReadTracker.track { ReadTracker.noteRawStatement() }.footprint
        #expect(raw.ranRawStatements && raw.entities.isEmpty)
    }

    @Test func lookupsOutsideATrackedReadAreNotNoted() throws {
        let positions = EntityPositions(Model(entities: [Book.self]))
        _ = try positions.position(of: Book.self)
        let (_, footprint) = ReadTracker.track {}
        #expect(footprint.isEmpty)
        // A read tracked inside another is its own.
        let (inner, outer) = try ReadTracker.track {
            _ = try positions.position(of: Book.self)
            return ReadTracker.track { ReadTracker.noteAlias("x") }.footprint
        }
        #expect(inner == ReadFootprint(aliases: ["x"]))
        #expect(outer == ReadFootprint(entities: ["Book"]))
    }
}
