extension Array {
    /// `nil` when empty.
    var nilIfEmpty: Self? { isEmpty ? nil : self }
}
