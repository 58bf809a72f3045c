import Glibc
import HCITransport
import ToolSupport

/// Streams the records of a capture file, or of standard input for "-", to `handle`: one
/// record and one 64 KiB read in memory, whatever the file's size. A damaged capture ends
/// in a ToolError that names the file, after the records before the damage were handled.
func readCapture(_ file: String, flushing flush: () -> Void = {}, _ handle: (CaptureRecord) throws -> Void) throws {
    let fd = file == "-" ? 0 : open(file, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { throw ToolError("cannot open \(file): \(String(cString: strerror(errno)))") }
    defer { if fd != 0 { Glibc.close(fd) } }
    var parser = CaptureParser()
    var chunk = [UInt8](repeating: 0, count: 1 << 16)
    var records = 0
    while true {
        let count = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
        if count < 0 {
            if errno == EINTR { continue }
            throw ToolError("cannot read \(file): \(String(cString: strerror(errno)))")
        }
        if count == 0 { break }
        do {
            try parser.feed(chunk[0..<count]) { record in
                records += 1
                try handle(record)
            }
        } catch let error as CaptureError {
            flush()
            throw ToolError("\(file): \(error)")
        }
    }
    do {
        try parser.finish()
    } catch {
        flush()
        throw ToolError("\(file): \(error) (\(records) records decoded before it)")
    }
}
