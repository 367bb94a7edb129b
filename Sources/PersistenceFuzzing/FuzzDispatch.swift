import Foundation
import PersistenceCore

/// One fuzz input through one decoder: the libFuzzer entry point and the deterministic test both call it.
package enum FuzzDispatch {
    /// Runs one input: its first byte picks the ``FuzzTarget``, the rest is the bytes the decoder reads.
    ///
    /// - Returns: `nil` when the decoder returned or threw a `PersistenceError`; otherwise what it threw (the
    ///   error's type and target only: a failure report never quotes the input).
    package static func run(_ input: some Collection<UInt8>) -> String? {
        guard let selector = input.first else { return nil }
        let target = FuzzTarget(selector: selector)
        do {
            try target.run(Data(input.dropFirst()))
            return nil
        } catch is PersistenceError {
            return nil
        } catch {
            return "\(target): threw \(type(of: error)), not a PersistenceError"
        }
    }
}
