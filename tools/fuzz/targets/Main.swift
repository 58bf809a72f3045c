#if FUZZING
import CLibFuzzer
#endif
import Glibc
import Logging

/// `bareble-fuzz TARGET [ARGS...]`. Built by tools/fuzz.sh with `-sanitize=fuzzer` and
/// FUZZING, ARGS are libFuzzer's (corpus directories, -max_total_time=...). In a normal
/// build, ARGS are input files replayed once each: how a crash file is reproduced under
/// a debugger, and how `swift build` keeps compiling the targets.
@main struct BareBLEFuzz {
    static func main() {
        let arguments = CommandLine.arguments
        if arguments.count == 2, arguments[1] == "--list" {
            for target in FuzzTarget.all { print(target.name) }
            return
        }
        // libFuzzer starts its merge and fork children with the arguments it was given,
        // which lack the target's name: the environment carries it to them.
        let named = arguments.count >= 2 ? FuzzTarget.named(arguments[1]) : nil
        let inherited = getenv(targetVariable).flatMap { FuzzTarget.named(String(cString: $0)) }
        guard let target = named ?? inherited else {
            let names = FuzzTarget.all.map(\.name).joined(separator: " ")
            print("usage: bareble-fuzz TARGET [libFuzzer arguments | input files]\ntargets: \(names)")
            exit(2)
        }
        let firstArgument = named == nil ? 1 : 2
        LoggingSystem.bootstrap { _ in DiscardingLogHandler() }
        setenv(targetVariable, target.name, 1)
        FuzzTarget.selected = target
        #if FUZZING
        var argv: [UnsafeMutablePointer<CChar>?] = [CommandLine.unsafeArgv[0]]
        for index in firstArgument..<Int(CommandLine.argc) { argv.append(CommandLine.unsafeArgv[index]) }
        argv.append(nil)
        var argc = CInt(argv.count - 1)
        let status = argv.withUnsafeMutableBufferPointer { buffer in
            var base = buffer.baseAddress
            return LLVMFuzzerRunDriver(&argc, &base, fuzzOneInput)
        }
        exit(status)
        #else
        for path in arguments.dropFirst(firstArgument) {
            guard let bytes = readFile(path) else {
                print("bareble-fuzz: cannot read \(path)")
                exit(1)
            }
            DiscardingLogHandler.select(for: bytes)
            target.run(bytes)
            print("\(path): ok")
        }
        #endif
    }

    static let targetVariable = "BAREBLE_FUZZ_TARGET"

    static func readFile(_ path: String) -> [UInt8]? {
        guard let file = fopen(path, "rb") else { return nil }
        defer { fclose(file) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = fread(&buffer, 1, buffer.count, file)
            if count == 0 { break }
            bytes += buffer[0..<count]
        }
        return ferror(file) == 0 ? bytes : nil
    }
}

#if FUZZING
/// One input through the selected target: the callback handed to `LLVMFuzzerRunDriver`,
/// and under the name libFuzzer's runtime itself refers to, which an unoptimised build
/// (`FUZZ_CONFIG=debug tools/fuzz.sh`) links in and a release build strips.
@_cdecl("LLVMFuzzerTestOneInput")
func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let input = Array(UnsafeBufferPointer(start: data, count: size))
    DiscardingLogHandler.select(for: input)
    FuzzTarget.selected?.run(input)
    return 0
}
#endif
