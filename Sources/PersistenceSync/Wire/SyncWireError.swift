public import Foundation
public import PersistenceCore

/// An error as the HTTP transport carries it: the `PersistenceError` code and message, with the HTTP status that
/// goes with the code. The client rebuilds the same `PersistenceError` from it.
public struct SyncWireError: Sendable, Hashable, Codable {
    /// The `PersistenceError` code's raw value.
    public var code: String
    /// Its message.
    public var message: String

    /// The wire form of `error`: a `PersistenceError` as it is; anything else as a server-side `backend` failure whose
    /// details stay on the server.
    public init(_ error: any Error) {
        if let error = error as? PersistenceError {
            code = error.code.rawValue
            message = error.message
        } else {
            code = PersistenceError.Code.backend.rawValue
            message = "the sync server failed"
        }
    }

    /// The error the client throws.
    public var persistenceError: PersistenceError {
        PersistenceError(PersistenceError.Code(rawValue: code), "the sync server said: " + message)
    }

    /// The HTTP status for the error's code.
    public var status: Int {
        switch PersistenceError.Code(rawValue: code) {
        case .unauthorized: 403
        case .invalidArgument, .invalidValue, .unknownEntity, .unknownAttribute, .typeMismatch: 400
        case .conflict: 409
        case .resyncRequired: 410
        case .updateRequired, .invalidConfiguration: 426
        case .busy, .unreachable, .connectionLost, .commitOutcomeUnknown: 503
        default: 500
        }
    }

    /// JSON for the wire: the same encoding on both sides.
    public static func encoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return encoder
    }
}
