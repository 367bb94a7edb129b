/// A workload produced a wrong result: the run is worthless, and `compare` exits non-zero.
public struct VerificationError: Error, CustomStringConvertible {
    public var workload: String
    public var implementation: String
    public var message: String

    public init(workload: String, implementation: String, message: String) {
        self.workload = workload
        self.implementation = implementation
        self.message = message
    }

    public var description: String {
        "verification failed: \(workload) (\(implementation)): \(message)"
    }
}

/// Checks what a workload produced against what the generator predicts.
struct Verifier {
    let workload: String
    let implementation: String

    func expect(_ condition: Bool, _ message: @autoclosure () -> String) throws(VerificationError) {
        guard condition else {
            throw VerificationError(workload: workload, implementation: implementation, message: message())
        }
    }

    func expect(_ actual: Checksum, equals expected: Checksum, _ what: String) throws(VerificationError) {
        try expect(actual == expected, "\(what): expected \(expected), got \(actual)")
    }
}
