import Glibc
import HCITransport

/// Runs bumble_scan_baseline.py on the same stream and returns Bumble's reports per second.
enum BumbleBaseline {
    static func run(_ stream: ReportStream, python: String?) throws -> Double {
        let script = try VirtualRadio.findScript()
        // script = <repository>/tools/virtual-radio/bareble_radio.py
        let tools = script.split(separator: "/", omittingEmptySubsequences: false).dropLast(2).joined(separator: "/")
        let baseline = tools + "/bareble-bench/bumble_scan_baseline.py"
        let interpreter = python ?? VirtualRadio.findPython(script: script)
        let path = "/tmp/bareble-bench-stream-\(getpid()).h4"
        defer { unlink(path) }
        guard let file = fopen(path, "wb") else { throw BenchError("cannot write \(path)") }
        let bytes = stream.concatenated
        _ = bytes.withUnsafeBytes { fwrite($0.baseAddress, 1, $0.count, file) }
        fclose(file)

        let command = "\(interpreter) \(baseline) \(path) \(stream.frames.count)"
        guard let pipe = popen(command, "r") else { throw BenchError("cannot run \(command)") }
        var output = ""
        var buffer = [CChar](repeating: 0, count: 4096)
        while fgets(&buffer, Int32(buffer.count), pipe) != nil {
            output += String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        }
        let status = pclose(pipe)
        guard status == 0, let range = output.firstRange(of: "\"reports_per_second\": ") else {
            throw BenchError("the Bumble baseline failed (\(status)): \(output)")
        }
        let number = output[range.upperBound...].prefix { $0 != "}" && $0 != "," }
        guard let rate = Double(number.trimmingPrefix(" ")) else { throw BenchError("unexpected Bumble output: \(output)") }
        return rate
    }
}
