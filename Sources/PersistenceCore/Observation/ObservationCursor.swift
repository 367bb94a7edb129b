/// Where one consumer of a started observation is: the commit its last read saw, the last value it kept (to leave
/// out duplicates and compute differences), and whether the observation ended.
///
/// ``ObservedValues``' iterator and the task behind an ``ObservationToken`` each drive one, one call at a time.
struct ObservationCursor<Value: Sendable>: Sendable {
    private let session: ObservationSession<Value>
    private let isDuplicate: (@Sendable (Value, Value) -> Bool)?
    private let reduce: (@Sendable (Value?, Value) -> Value)?
    /// The hub's sequence number before the last read began; `nil` before the first.
    private var seen: UInt64?
    /// The last value read and delivered, kept only when a duplicate check or a reduction needs it.
    private var last: Value?
    private(set) var isFinished = false

    init(_ observation: ValueObservation<Value>, session: ObservationSession<Value>) {
        self.session = session
        isDuplicate = observation.isDuplicate
        reduce = observation.reduce
    }

    /// The first value, read now on the calling thread; the observation ends when the read fails.
    mutating func first() throws -> Value {
        do {
            let (value, seen) = try session.readNow()
            self.seen = seen
            return accept(value) ?? value
        } catch {
            finish()
            throw error
        }
    }

    /// The next value: the first one (read off the cooperative pool) or, after a commit that concerns the
    /// observation, the next one that isn't a duplicate. `nil` once the observation ended (the task was cancelled,
    /// or ``finish()``); a failed read ends it and throws.
    mutating func next() async throws -> Value? {
        while !isFinished {
            guard !Task.isCancelled else { break }
            if let seen {
                guard await session.waitForCommit(after: seen) else { break }
            }
            let read: (value: Value, seen: UInt64)
            do {
                read = try await session.read()
            } catch is CancellationError {
                break
            } catch {
                finish()
                throw error
            }
            seen = read.seen
            if let value = accept(read.value) { return value }
        }
        finish()
        return nil
    }

    /// Ends the observation.
    mutating func finish() {
        isFinished = true
        last = nil
        session.end()
    }

    /// The value to deliver for `value` just read: `nil` for a duplicate of the last one.
    private mutating func accept(_ value: Value) -> Value? {
        if let last, let isDuplicate, isDuplicate(last, value) { return nil }
        let delivered = reduce.map { $0(last, value) } ?? value
        if isDuplicate != nil || reduce != nil { last = value }
        return delivered
    }
}
