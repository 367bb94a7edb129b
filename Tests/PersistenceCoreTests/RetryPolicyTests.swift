import PersistenceCore
import Testing

/// The retry policy's waits: exponential growth to a cap, and the share of each wait that is random.
struct RetryPolicyTests {
    @Test func waitsGrowByTheMultiplierUpToTheCap() {
        let exact = RetryPolicy(initialDelay: .milliseconds(10), multiplier: 2, maximumDelay: .seconds(1), jitter: 0)
        let waits = (1...10).map { exact.delay(after: $0) }
        #expect(
            waits == [10, 20, 40, 80, 160, 320, 640, 1000, 1000, 1000].map { Duration.milliseconds($0) },
            "\(waits)")
    }

    @Test func jitterMakesTheLastShareOfEachWaitRandom() {
        let half = RetryPolicy(initialDelay: .milliseconds(100), multiplier: 1, maximumDelay: .seconds(1), jitter: 0.5)
        let full = RetryPolicy(initialDelay: .milliseconds(100), multiplier: 1, maximumDelay: .seconds(1), jitter: 1)
        let halfWaits = (0..<500).map { _ in half.delay(after: 3) }
        let fullWaits = (0..<500).map { _ in full.delay(after: 3) }
        #expect(halfWaits.allSatisfy { $0 >= .milliseconds(50) && $0 <= .milliseconds(100) })
        #expect(fullWaits.allSatisfy { $0 >= .zero && $0 <= .milliseconds(100) })
        // Random, not constant: writers that failed together don't come back together.
        #expect(Set(halfWaits).count > 400 && fullWaits.contains { $0 < .milliseconds(50) })
    }

    @Test func theDefaultOutlastsARestartOfSeconds() {
        let policy = RetryPolicy()
        let shortest = (1..<policy.maximumAttempts).reduce(Duration.zero) { total, attempt in
            var fixed = policy
            fixed.jitter = 0
            return total + fixed.delay(after: attempt) / 2
        }
        #expect(shortest >= .seconds(2), "\(shortest)")
        #expect(!policy.retriesUnknownOutcome)
    }

    @Test func collisionsForADurationRetryUntilItHasPassedWhateverTheAttempts() {
        let policy = RetryPolicy.collisions(for: .seconds(30))
        let conflict = PersistenceError(.conflict, "")
        #expect(policy.retries(conflict, after: 100_000, elapsed: .seconds(29)))
        #expect(!policy.retries(conflict, after: 2, elapsed: .seconds(30)))
        #expect(!policy.retries(PersistenceError(.commitOutcomeUnknown, ""), after: 1, elapsed: .zero))
        #expect((1...20).allSatisfy { policy.delay(after: $0) <= .milliseconds(64) })
    }

    @Test func retriesOnlyWhatCommittedNothing() {
        let policy = RetryPolicy(maximumAttempts: 3)
        for code in [PersistenceError.Code.conflict, .connectionLost, .busy, .unreachable] {
            #expect(policy.retries(PersistenceError(code, ""), after: 1, elapsed: .zero))
            #expect(!policy.retries(PersistenceError(code, ""), after: 3, elapsed: .zero))
        }
        for code in [PersistenceError.Code.commitOutcomeUnknown, .duplicateKey, .invalidValue, .closed] {
            #expect(!policy.retries(PersistenceError(code, ""), after: 1, elapsed: .zero))
        }
        var idempotent = policy
        idempotent.retriesUnknownOutcome = true
        #expect(idempotent.retries(PersistenceError(.commitOutcomeUnknown, ""), after: 1, elapsed: .zero))
        var timed = policy
        timed.maximumDuration = .seconds(1)
        #expect(!timed.retries(PersistenceError(.busy, ""), after: 1, elapsed: .seconds(1)))
    }
}
