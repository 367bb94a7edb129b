import PersistenceCore

extension LMDBBuilder {
    /// The most UTF-8 bytes of ``semaphorePrefix``: LMDB's names must fit 31 bytes (Apple's `PSEMNAMLEN`) with the
    /// prefix, its separators, `MDBr` and at least 5 characters of the store's hash.
    static let maximumSemaphorePrefixBytes = 20

    /// Checks ``semaphorePrefix`` before anything touches disk.
    /// - Throws: `invalidConfiguration` for a prefix that is empty, longer than 20 UTF-8 bytes, holds `/` or NUL, or
    ///   is set where this build's LMDB has no semaphore names to prefix (the system's liblmdb).
    func validateSemaphorePrefix() throws { try Self.validateSemaphorePrefix(semaphorePrefix) }

    /// Checks a semaphore prefix (``semaphorePrefix``, or the one the store tool is given) as
    /// ``validateSemaphorePrefix()`` does; nothing for `nil`.
    static func validateSemaphorePrefix(_ semaphorePrefix: String?) throws {
        guard let semaphorePrefix else { return }
        let bytes = semaphorePrefix.utf8
        guard !bytes.isEmpty else {
            throw PersistenceError(.invalidConfiguration, "semaphorePrefix is empty (use nil for LMDB's own names)")
        }
        guard bytes.count <= Self.maximumSemaphorePrefixBytes else {
            throw PersistenceError(
                .invalidConfiguration,
                "semaphorePrefix has \(bytes.count) UTF-8 bytes; at most \(Self.maximumSemaphorePrefixBytes) fit in "
                    + "the 31 bytes of a semaphore name")
        }
        guard !bytes.contains(UInt8(ascii: "/")), !bytes.contains(0) else {
            throw PersistenceError(.invalidConfiguration, "semaphorePrefix can't hold '/' or NUL")
        }
        guard Environment.supportsSemaphorePrefix else {
            throw PersistenceError(
                .invalidConfiguration,
                "semaphorePrefix needs the vendored LMDB (Apple platforms, or the VendoredLibraries trait); the "
                    + "system's liblmdb names no semaphores")
        }
    }
}
