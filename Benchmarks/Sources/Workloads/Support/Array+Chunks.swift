extension Array {
    /// The array's elements in consecutive slices of `size` (the last one shorter when they don't divide evenly).
    func chunks(of size: Int) -> [ArraySlice<Element>] {
        stride(from: 0, to: count, by: size).map { self[$0..<Swift.min($0 + size, count)] }
    }
}
