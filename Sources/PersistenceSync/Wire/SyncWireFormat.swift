import Foundation

/// How the sync protocol's messages travel over HTTP.
///
/// The bulky messages — a pushed batch, a push's result, a pulled page — go in a compact binary form when both
/// sides read it (``SyncBinaryWire``); every other message, and every message to or from a side that doesn't read
/// it, is JSON. The binary form is about a third of JSON's size for typical records, and several times cheaper to
/// write and read: JSON's coding, not the link, bounds a first sync over HTTP on a small server.
public enum SyncWireFormat: String, Sendable, Hashable, CaseIterable {
    /// JSON (`application/json`): readable, and what every server reads.
    case json
    /// The compact binary form (``SyncBinaryWire/mediaType``) for pushes, push results and pulled pages, JSON for
    /// the rest.
    case binary

    /// The HTTP media type of the format's bulky messages.
    public var mediaType: String {
        switch self {
        case .json: "application/json"
        case .binary: SyncBinaryWire.mediaType
        }
    }

    /// The format a `Content-Type` header's value names, or `nil` for one it doesn't (parameters after `;` ignored,
    /// case-insensitive).
    public init?(contentType: String) {
        let type = contentType.split(separator: ";", maxSplits: 1).first?.trimmingCharacters(in: .whitespaces)
        switch type?.lowercased() {
        case SyncBinaryWire.mediaType: self = .binary
        case "application/json": self = .json
        default: return nil
        }
    }

    /// Whether an `Accept` header's value lists the binary form.
    public static func acceptsBinary(_ accept: String) -> Bool {
        accept.split(separator: ",").contains { part in
            SyncWireFormat(contentType: String(part)) == .binary
        }
    }
}
