import Glibc
import HCITransport

/// Runs one of the Bumble baseline scripts beside this file on an H4 stream written to a
/// temporary file, and returns the figure it prints as `"KEY": VALUE` in its JSON line.
enum BumbleBaseline {
    static func run(_ scriptName: String, stream bytes: [UInt8], arguments: [String], key: String, python: String?) throws -> Double {
        let script = try VirtualRadio.findScript()
        // script = <repository>/tools/virtual-radio/bareble_radio.py
        let tools = script.split(separator: "/", omittingEmptySubsequences: false).dropLast(2).joined(separator: "/")
        let baseline = tools + "/bareble-bench/" + scriptName
        let interpreter = python ?? VirtualRadio.findPython(script: script)
        let path = "/tmp/bareble-bench-stream-\(getpid()).h4"
        defer { unlink(path) }
        guard let file = fopen(path, "wb") else { throw BenchError("cannot write \(path)") }
        _ = bytes.withUnsafeBytes { fwrite($0.baseAddress, 1, $0.count, file) }
        fclose(file)

        let command = ([interpreter, baseline, path] + arguments).joined(separator: " ")
        guard let pipe = popen(command, "r") else { throw BenchError("cannot run \(command)") }
        var output = ""
        var buffer = [CChar](repeating: 0, count: 4096)
        while fgets(&buffer, Int32(buffer.count), pipe) != nil {
            output += String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        }
        let status = pclose(pipe)
        guard status == 0, let range = output.firstRange(of: "\"\(key)\": ") else {
            throw BenchError("the Bumble baseline \(scriptName) failed (\(status)): \(output)")
        }
        let number = output[range.upperBound...].prefix { $0 != "}" && $0 != "," }
        guard let value = Double(number.trimmingPrefix(" ")) else { throw BenchError("unexpected Bumble output: \(output)") }
        return value
    }
}
