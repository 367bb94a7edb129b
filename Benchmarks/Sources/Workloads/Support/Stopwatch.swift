/// Times one operation with the monotonic clock.
enum Stopwatch {
    /// Runs `body` and returns its result with how long it took, in seconds.
    static func time<R>(_ body: () throws -> R) rethrows -> (result: R, seconds: Double) {
        let clock = ContinuousClock()
        let start = clock.now
        let result = try body()
        let elapsed = start.duration(to: clock.now)
        return (result, Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18)
    }
}
