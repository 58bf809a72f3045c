import ArgumentParser
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
        let printer = try TracePrinter(options)
        defer { printer.close() }
        try readCapture(file, flushing: printer.flush) { record in try printer.handle(record) }
    }
}
