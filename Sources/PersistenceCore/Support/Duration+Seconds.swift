extension Duration {
    /// The duration in seconds, as a `Double` (for waits and for reports).
    package var seconds: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}
