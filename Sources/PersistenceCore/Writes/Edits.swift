/// Thrown out of a write to roll it back when an edit is discarded; never escapes ``Database/edit(_:)-6kxsl``.
private struct DiscardedEdit: Error {
    /// `decision`, after throwing when it is ``EditDecision/discard`` (so the transaction rolls back).
    static func rollingBack(_ decision: EditDecision) throws -> EditDecision {
        if decision == .discard { throw DiscardedEdit() }
        return decision
    }
}

extension Database {
    /// Runs `body` in a write transaction that it may keep or throw away — an editor screen's Save and Cancel.
    ///
    /// Inside `body` the context reads its own changes back, as in any write. Returning ``EditDecision/commit``
    /// commits them; returning ``EditDecision/discard`` rolls them back without an error: the store is left exactly
    /// as it was and observers hear nothing. A thrown error rolls back too, and is rethrown.
    ///
    /// ```swift
    /// let decision = try db.edit { context in
    ///     try context.update(draft)
    ///     let preview = try context.recover(Invoice.self, id: draft.id)   // the edited invoice
    ///     return userConfirms(preview) ? .commit : .discard
    /// }
    /// ```
    ///
    /// - Returns: What `body` decided.
    @discardableResult
    public func edit(_ body: (Context) throws -> EditDecision) throws -> EditDecision {
        do {
            return try write { context in
                try DiscardedEdit.rollingBack(body(context))
            }
        } catch is DiscardedEdit {
            return .discard
        }
    }

    /// Runs `body` in a write transaction that it may keep or throw away, as the synchronous ``edit(_:)`` does,
    /// off the cooperative pool; a cancelled task's edit is rolled back and throws `CancellationError`.
    @discardableResult
    public func edit(_ body: @escaping @Sendable (Context) throws -> EditDecision) async throws -> EditDecision {
        do {
            return try await write { context in
                try DiscardedEdit.rollingBack(body(context))
            }
        } catch is DiscardedEdit {
            return .discard
        }
    }
}

extension DatabaseContext {
    /// Runs `body` in a savepoint of this write that it may keep or throw away, without an error.
    ///
    /// Returning ``EditDecision/discard`` rolls back what `body` changed and the write goes on; ``EditDecision/commit``
    /// keeps it as part of the write (which still commits or rolls back as a whole).
    @discardableResult
    public func edit(_ body: () throws -> EditDecision) throws -> EditDecision {
        do {
            return try savepoint {
                try DiscardedEdit.rollingBack(body())
            }
        } catch is DiscardedEdit {
            return .discard
        }
    }
}
