import PersistenceCore
import Testing

private struct Positioned01: Entity { var id: Int64 }
private struct Positioned02: Entity { var id: Int64 }
private struct Positioned03: Entity { var id: Int64 }
private struct Positioned04: Entity { var id: Int64 }
private struct Positioned05: Entity { var id: Int64 }
private struct Positioned06: Entity { var id: Int64 }
private struct Positioned07: Entity { var id: Int64 }
private struct Positioned08: Entity { var id: Int64 }
private struct Positioned09: Entity { var id: Int64 }
private struct Positioned10: Entity { var id: Int64 }
private struct Positioned11: Entity { var id: Int64 }
private struct Positioned12: Entity { var id: Int64 }
private struct Positioned13: Entity { var id: Int64 }
private struct Positioned14: Entity { var id: Int64 }
private struct Positioned15: Entity { var id: Int64 }
private struct Positioned16: Entity { var id: Int64 }
private struct Positioned17: Entity { var id: Int64 }
private struct Positioned18: Entity { var id: Int64 }
private struct NotInTheModel: Entity { var id: Int64 }

private let everyType: [any Entity.Type] = [
    Positioned01.self, Positioned02.self, Positioned03.self, Positioned04.self, Positioned05.self, Positioned06.self,
    Positioned07.self, Positioned08.self, Positioned09.self, Positioned10.self, Positioned11.self, Positioned12.self,
    Positioned13.self, Positioned14.self, Positioned15.self, Positioned16.self, Positioned17.self, Positioned18.self,
]

@Suite("Finding an entity's place in its model")
struct EntityPositionsTests {
    @Test(
        "Each entity type is found at its own position, in models searched one by one and hashed",
        arguments: [1, 2, EntityPositions.linearSearchLimit, EntityPositions.linearSearchLimit + 1, 18])
    func positions(_ count: Int) throws {
        let types = Array(everyType.prefix(count))
        let positions = EntityPositions(Model(entities: types))
        for (expected, type) in types.enumerated() {
            #expect(try positions.position(of: type) == expected)
        }
    }

    @Test("A type that is not part of the model is an unknownEntity error naming it", arguments: [3, 18])
    func unknown(_ count: Int) {
        let positions = EntityPositions(Model(entities: Array(everyType.prefix(count))))
        #expect {
            try positions.position(of: NotInTheModel.self)
        } throws: { error in
            guard let error = error as? PersistenceError else { return false }
            return error.code == .unknownEntity && error.message.contains("NotInTheModel")
        }
        if count < everyType.count {
            #expect(throws: PersistenceError.self) { try positions.position(of: everyType[count]) }
        }
    }
}
