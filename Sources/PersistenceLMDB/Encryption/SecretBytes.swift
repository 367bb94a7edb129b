import Foundation

#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Zeroing of memory that held key material, in a way the optimizer may not remove.
///
/// A plain store of zeros into memory that is freed right after is a dead store the compiler may drop; these C
/// functions are specified not to be dropped.
enum SecretBytes {
    static func zero(_ buffer: UnsafeMutableRawBufferPointer) {
        guard let base = buffer.baseAddress, buffer.count > 0 else { return }
        #if canImport(Darwin)
            _ = memset_s(base, buffer.count, 0, buffer.count)
        #else
            explicit_bzero(base, buffer.count)
        #endif
    }

    /// Zeroes the bytes of `data` in place (a best effort: copies Foundation made earlier are out of reach).
    static func zero(_ data: inout Data) {
        data.withUnsafeMutableBytes { zero($0) }
    }
}
