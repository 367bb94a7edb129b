import Testing

@testable import PersistenceCore

/// Which values an observation compares by default, and how records' content is compared for a list's updates.
struct ObservationDuplicatesTests {
    struct Note: Entity, Equatable {
        var id: Int64
        var text: String
    }

    /// Not `Equatable`: compared by stored values.
    struct Sketch: Entity {
        var id: Int64
        var strokes: [Double]
    }

    struct Opaque: Sendable {}

    @Test func equatableValuesAreComparedAtRunTime() throws {
        let notes = try #require(ValueEquality.of([Note].self))
        #expect(notes([Note(id: 1, text: "a")], [Note(id: 1, text: "a")]))
        #expect(!notes([Note(id: 1, text: "a")], [Note(id: 1, text: "b")]))
        let note = try #require(ValueEquality.of(Note?.self))
        #expect(note(nil, nil) && !note(nil, Note(id: 1, text: "")))
        let integers = try #require(ValueEquality.of(Int.self))
        #expect(integers(3, 3))
        #expect(ValueEquality.of(Opaque.self) == nil, "a value that can't be compared is always delivered")
        #expect(ValueEquality.of([Sketch].self) == nil)
    }

    @Test func recordsThatAreNotEquatableAreComparedByStoredValues() {
        let same = ValueEquality.records(Sketch.self)
        #expect(same(Sketch(id: 1, strokes: [1, 2]), Sketch(id: 1, strokes: [1, 2])))
        #expect(!same(Sketch(id: 1, strokes: [1, 2]), Sketch(id: 1, strokes: [2])))
        let lists = ValueEquality.lists(Sketch.self)
        #expect(lists([Sketch(id: 1, strokes: [])], [Sketch(id: 1, strokes: [])]))
        #expect(!lists([Sketch(id: 1, strokes: [])], [Sketch(id: 2, strokes: [])]))
        #expect(!lists([], [Sketch(id: 2, strokes: [])]))
    }

    @Test func theDefaultAndTheOptOut() {
        let observation = ValueObservation.records(Note.self)
        #expect(observation.isDuplicate != nil)
        #expect(observation.allowingDuplicates().isDuplicate == nil)
        #expect(observation.allowingDuplicates().removeDuplicates().isDuplicate != nil)
        let opaque = ValueObservation.tracking { _ in Opaque() }
        #expect(opaque.isDuplicate == nil)
        #expect(opaque.removeDuplicates { _, _ in true }.isDuplicate != nil)
    }
}
