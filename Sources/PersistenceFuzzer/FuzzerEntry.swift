import Foundation
import PersistenceFuzzing

#if FUZZING
    /// libFuzzer's entry point (`make fuzz` builds with `-sanitize=fuzzer -D FUZZING`): one input through the
    /// decoder its first byte picks. An error other than a `PersistenceError` is a finding: abort, so libFuzzer
    /// saves the input as a crash.
    @_cdecl("LLVMFuzzerTestOneInput")
    public func fuzzerTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
        guard let data else { return 0 }
        if let failure = FuzzDispatch.run(UnsafeBufferPointer(start: data, count: size)) {
            FileHandle.standardError.write(Data("finding: \(failure)\n".utf8))
            abort()
        }
        return 0
    }

    /// libFuzzer's driver, which parses its flags and runs the fuzzing loop with `callback`.
    @_silgen_name("LLVMFuzzerRunDriver")
    private func runFuzzerDriver(
        _ argc: UnsafeMutablePointer<CInt>,
        _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
        _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt
    ) -> CInt

    /// The program's entry point: SwiftPM links an executable target's `main` to `<target>_main`, so libFuzzer's own
    /// `main` cannot be used; this starts libFuzzer's driver instead.
    @_cdecl("PersistenceFuzzer_main")
    public func fuzzerMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
        var argc = argc
        var argv = argv
        return runFuzzerDriver(&argc, &argv, fuzzerTestOneInput)
    }
#else
    /// Without libFuzzer: `PersistenceFuzzer corpus DIR` writes the seed corpus (one file per well-formed input
    /// of each target, selector byte first); `PersistenceFuzzer FILE…` replays inputs, e.g. a crash libFuzzer saved.
    @main
    enum FuzzerTool {
        static func main() throws {
            let arguments = Array(CommandLine.arguments.dropFirst())
            if arguments.first == "corpus", arguments.count == 2 {
                try writeCorpus(to: URL(fileURLWithPath: arguments[1], isDirectory: true))
                return
            }
            var failures = 0
            for path in arguments {
                let input = try Data(contentsOf: URL(fileURLWithPath: path))
                let failure = FuzzDispatch.run(input)
                print("\(path): \(failure ?? "ok")")
                if failure != nil { failures += 1 }
            }
            if failures > 0 { exit(1) }
        }

        static func writeCorpus(to directory: URL) throws {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            var written = 0
            for target in FuzzTarget.allCases {
                for (number, seed) in FuzzSeeds.seeds(for: target).enumerated() {
                    let file = directory.appendingPathComponent("seed-\(target)-\(number)")
                    try (Data([target.rawValue]) + seed).write(to: file)
                    written += 1
                }
            }
            print("wrote \(written) seeds to \(directory.path)")
        }
    }
#endif
