import Foundation

@testable import PersistenceLMDB

/// `Data` forms of the key operations, so tests read as plain values in, plain values out.
extension StoreKeys {
    func seal(_ plaintext: Data, authenticating aad: Data, nonce: Nonce) throws -> Data {
        try plaintext.withUnsafeBytes { plaintext in
            try aad.withUnsafeBytes { aad in try seal(plaintext, authenticating: aad, nonce: nonce) }
        }
    }

    func open(_ sealed: Data, authenticating aad: Data) throws -> Data {
        try sealed.withUnsafeBytes { sealed in
            try aad.withUnsafeBytes { aad in try open(sealed, authenticating: aad) { Data($0) } }
        }
    }

    func indexHash(_ bytes: Data) -> Data {
        bytes.withUnsafeBytes { indexHash($0) }
    }
}

extension Data {
    /// The bytes a nonce occupies in front of a value sealed with `cipher`.
    init(_ nonce: Nonce, cipher: ValueCipher = .aes256gcm) {
        self.init(count: cipher.nonceByteCount)
        withUnsafeMutableBytes { nonce.write(to: $0) }
    }
}
