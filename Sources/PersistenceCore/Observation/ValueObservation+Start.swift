/// Starting an observation: as an async sequence, or with the first value at once and later ones on an actor.
extension ValueObservation {
    /// Starts the observation on `db` as an async sequence: the current value first, then one after each commit
    /// that changed it (see ``ObservedValues``).
    ///
    /// ```swift
    /// for try await todos in ValueObservation.records(Todo.self).values(in: db) { render(todos) }
    /// ```
    ///
    /// Each call is a new, independent observation, registered from the moment it returns.
    public func values(in db: some Database) -> ObservedValues<Value> { ObservedValues(self, in: db) }

    /// Starts the observation on `db` with its first value read and handed to `onChange` before this returns — a
    /// screen renders its initial state without waiting — and later values delivered on the main actor.
    ///
    /// ```swift
    /// @MainActor final class TodosScreen {
    ///     private var token: ObservationToken?
    ///     private(set) var todos: [Todo] = []
    ///
    ///     func show(_ db: some Database) {
    ///         token = ValueObservation.records(Todo.self, sortedBy: [.ascending("due")]).start(in: db) { [weak self] in
    ///             self?.todos = $0                  // at once, then after each commit that changes them
    ///         }
    ///     }
    /// }
    /// ```
    ///
    /// The first read runs on the calling thread, in a synchronous read transaction (short for a screen's query,
    /// as GRDB's immediate scheduling). Later values are read off the cooperative pool after each commit that
    /// concerns the observation, then delivered on the main actor in commit order; a duplicate of the last value is
    /// left out (see ``ValueObservation``), and values coalesce when the main actor is busy.
    ///
    /// Keep the token: cancelling or releasing it stops the observation (``ObservationToken``).
    ///
    /// - Parameters:
    ///   - db: The database to observe.
    ///   - onError: Called on the main actor when a read fails — before this returns, for the first one; the
    ///     observation has ended then.
    ///   - onChange: Called on the main actor with each value — the first one before this returns.
    @MainActor
    public func start(
        in db: some Database, onError: @escaping @MainActor (any Error) -> Void = { _ in },
        onChange: @escaping @MainActor (Value) -> Void
    ) -> ObservationToken {
        let token = ObservationToken()
        let session = ObservationSession(self, in: db)
        guard let cursor = startCursor(session, onError: onError, onChange: onChange) else { return token }
        let flag = token.flag
        let task = Task.detached { [cursor] in
            var cursor = cursor
            do {
                while let value = try await cursor.next() {
                    await MainActor.run {
                        guard !flag.isCancelled else { return }
                        onChange(value)
                    }
                }
            } catch {
                await MainActor.run {
                    guard !flag.isCancelled else { return }
                    onError(error)
                }
            }
        }
        token.run(task) { session.end() }
        return token
    }

    /// Starts the observation on `db` with its first value read and handed to `onChange` before this returns, on
    /// the caller's actor, and later values delivered on that actor too.
    ///
    /// ```swift
    /// actor Dashboard {
    ///     private var token: ObservationToken?
    ///     private var unread = 0
    ///
    ///     func start(_ db: some Database) {
    ///         token = ValueObservation.tracking { try $0.count(Message.self, where: Field("read") == false) }
    ///             .start(in: db, on: self) { dashboard, count in dashboard.unread = count }
    ///     }
    /// }
    /// ```
    ///
    /// As ``start(in:onError:onChange:)``, with `actor` in place of the main actor.
    ///
    /// - Parameters:
    ///   - db: The database to observe.
    ///   - actor: The actor that receives the values; the caller runs on it.
    ///   - onError: Called on `actor` when a read fails — before this returns, for the first one; the observation has
    ///     ended then.
    ///   - onChange: Called on `actor` with each value — the first one before this returns.
    public func start<A: Actor>(
        in db: some Database, on actor: isolated A,
        onError: @escaping @Sendable (isolated A, any Error) -> Void = { _, _ in },
        onChange: @escaping @Sendable (isolated A, Value) -> Void
    ) -> ObservationToken {
        let token = ObservationToken()
        let session = ObservationSession(self, in: db)
        guard
            let cursor = startCursor(session, onError: { onError(actor, $0) }, onChange: { onChange(actor, $0) })
        else { return token }
        let flag = token.flag
        let task = Task.detached { [cursor] in
            var cursor = cursor
            do {
                while let value = try await cursor.next() {
                    await Self.deliver(value, on: actor, unless: flag, onChange)
                }
            } catch {
                await Self.deliver(error, on: actor, unless: flag, onError)
            }
        }
        token.run(task) { session.end() }
        return token
    }

    /// Reads the first value here and hands it to `onChange` (or the error to `onError`, returning `nil`); returns
    /// the cursor that reads the next ones.
    private func startCursor(
        _ session: ObservationSession<Value>, onError: (any Error) -> Void, onChange: (Value) -> Void
    ) -> ObservationCursor<Value>? {
        var cursor = ObservationCursor(self, session: session)
        do {
            let first = try cursor.first()
            onChange(first)
            return cursor
        } catch {
            onError(error)
            return nil
        }
    }

    private static func deliver<A: Actor, T>(
        _ value: T, on actor: isolated A, unless flag: CancellationFlag, _ body: @Sendable (isolated A, T) -> Void
    ) {
        guard !flag.isCancelled else { return }
        body(actor, value)
    }
}
