import ArgumentParser
import Glibc
import HCITransport
import ToolSupport

struct Read: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Decode a capture file, or standard input with -.",
        discussion: "Reads as it decodes: memory stays one record and one read, whatever the file's size."
    )

    @Argument(help: "A btsnoop, pcap or pcapng file, or - for standard input.")
    var file: String

    @OptionGroup var options: DecodeOptions

    func run() throws {
        let fd = file == "-" ? 0 : open(file, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw ToolError("cannot open \(file): \(String(cString: strerror(errno)))") }
        defer { if fd != 0 { Glibc.close(fd) } }
        let printer = try TracePrinter(options)
        defer { printer.close() }
        var parser = CaptureParser()
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw ToolError("cannot read \(file): \(String(cString: strerror(errno)))")
            }
            if count == 0 { break }
            do {
                try parser.feed(chunk[0..<count]) { record in try printer.handle(record) }
            } catch let error as CaptureError {
                printer.flush()
                throw ToolError("\(file): \(error)")
            }
        }
        do {
            try parser.finish()
        } catch {
            printer.flush()
            throw ToolError("\(file): \(error) (\(printer.decoded) records decoded before it)")
        }
    }
}
