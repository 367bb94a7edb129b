#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Reads this process's (or a child's) memory figures from `/proc/<pid>/status` (Linux), without allocating: it is
/// called during the iteration it measures.
///
/// - `VmHWM`: peak resident set size (anonymous + file-backed + shared).
/// - `RssAnon`: resident anonymous memory — the heap, and what malloc maps.
/// - `RssFile`: resident file-backed pages — for LMDB, the pages of the memory-mapped store touched so far.
public struct MemoryProbe {
    public struct Sample: Sendable {
        public var peakKiB = 0
        public var anonymousKiB = 0
        public var fileKiB = 0
    }

    private var buffer = [UInt8](repeating: 0, count: 8192)
    /// `/proc/self/status`, or another process's.
    private let path: String

    /// This process's figures.
    public init() { path = "/proc/self/status" }

    /// The figures of process `processID` (a child's, sampled while it runs).
    public init(processID: Int32) { path = "/proc/\(processID)/status" }

    /// Whether the figures are available (Linux only).
    public static var isAvailable: Bool {
        #if os(Linux)
            true
        #else
            false
        #endif
    }

    /// Resets the peak (`VmHWM`) to the current resident size, so it measures only what comes next (Linux ≥ 4.0:
    /// writing 5 to `/proc/self/clear_refs`). Returns whether it worked.
    @discardableResult
    public static func resetPeak() -> Bool {
        let descriptor = open("/proc/self/clear_refs", O_WRONLY)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        return write(descriptor, "5", 1) == 1
    }

    /// The current figures, in KiB; zeros where unavailable.
    public mutating func sample() -> Sample {
        var sample = Sample()
        let descriptor = open(path, O_RDONLY)
        guard descriptor >= 0 else { return sample }
        defer { close(descriptor) }
        let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
        guard count > 0 else { return sample }
        buffer.withUnsafeBufferPointer { bytes in
            let text = UnsafeBufferPointer(rebasing: bytes[0..<count])
            sample.peakKiB = Self.value(of: "VmHWM:", in: text)
            sample.anonymousKiB = Self.value(of: "RssAnon:", in: text)
            sample.fileKiB = Self.value(of: "RssFile:", in: text)
        }
        return sample
    }

    /// The number after `label` at the start of a line, or 0.
    private static func value(of label: StaticString, in text: UnsafeBufferPointer<UInt8>) -> Int {
        let label = UnsafeBufferPointer(start: label.utf8Start, count: label.utf8CodeUnitCount)
        var index = 0
        while index + label.count <= text.count {
            let atLineStart = index == 0 || text[index - 1] == UInt8(ascii: "\n")
            if atLineStart && text[index..<index + label.count].elementsEqual(label) {
                var position = index + label.count
                var value = 0
                while position < text.count, text[position] == UInt8(ascii: " ") || text[position] == 9 {
                    position += 1
                }
                while position < text.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(text[position]) {
                    value = value * 10 + Int(text[position] - UInt8(ascii: "0"))
                    position += 1
                }
                return value
            }
            index += 1
        }
        return 0
    }
}
