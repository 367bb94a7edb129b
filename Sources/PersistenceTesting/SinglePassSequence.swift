/// A sequence that can be iterated only once, as a network stream or a file reader can: it makes its elements as
/// they are asked for and counts how often it was started, so a test can prove that a write consumed it once.
///
/// ```swift
/// let stream = SinglePassSequence(count: 60_000) { Item(id: Int64($0)) }
/// try db.create(stream)
/// #expect(stream.iterations == 1)
/// ```
///
/// Not `Sendable`: it is used on one thread, inside a write block.
public final class SinglePassSequence<Element>: Sequence, IteratorProtocol {
    private let count: Int
    private let make: (Int) -> Element
    /// How many elements it has handed out (numbered from 1).
    public private(set) var handedOut = 0
    /// How many times iteration was started.
    public private(set) var iterations = 0

    /// A sequence of `count` elements; `make` gets each element's number, from 1.
    public init(count: Int, make: @escaping (Int) -> Element) {
        self.count = count
        self.make = make
    }

    /// Starts iterating: the same, shared iterator every time, as a real stream is.
    public func makeIterator() -> SinglePassSequence<Element> {
        iterations += 1
        return self
    }

    /// The next element, or `nil` once all were handed out.
    public func next() -> Element? {
        guard handedOut < count else { return nil }
        handedOut += 1
        return make(handedOut)
    }
}
