import Glibc
@testable import HCITransport
import TestSupport

/// Sample packets, one of each kind a host sees.
enum Samples {
    static let reset = HCIPacket(.command, [0x03, 0x0C, 0x00])
    static let resetComplete = HCIPacket(.event, [0x0E, 0x04, 0x01, 0x03, 0x0C, 0x00])
    static let commandStatus = HCIPacket(.event, [0x0F, 0x04, 0x00, 0x01, 0x0D, 0x20])
    static let advertisingReport = HCIPacket(.event, [
        0x3E, 0x0F, 0x02, 0x01, 0x00, 0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x03, 0x02, 0x01, 0x06, 0xC8,
    ])
    static let vendorEvent = HCIPacket(.event, [0xFF, 0x02, 0xAB, 0xCD])
    /// An ATT Exchange MTU Request on handle 0x0040 (first automatically flushable).
    static let acl = HCIPacket(.acl, [0x40, 0x20, 0x07, 0x00, 0x03, 0x00, 0x04, 0x00, 0x02, 0x17, 0x00])
    static let sco = HCIPacket(.sco, [0x01, 0x00, 0x03, 0xAA, 0xBB, 0xCC])
    static let iso = HCIPacket(.iso, [0x01, 0x20, 0x03, 0x00, 0xAA, 0xBB, 0xCC])
    static let all = [reset, resetComplete, commandStatus, advertisingReport, vendorEvent, acl, sco, iso]
    static let fromController = [resetComplete, commandStatus, advertisingReport, vendorEvent, acl, sco, iso]

    /// A random packet a controller could send (plausible headers, random bodies).
    static func random(_ rng: inout SeededRandom) -> HCIPacket {
        switch Int.random(in: 0..<6, using: &rng) {
        case 0:
            return HCIPacket(.event, [0x3E, 0] + rng.bytes(lengths: 1...40)).withLengthByte(at: 1)
        case 1:
            return HCIPacket(.event, [0x0E, 0, 0x01] + rng.bytes(lengths: 2...12)).withLengthByte(at: 1)
        case 2:
            return HCIPacket(.event, [0x13, 0] + rng.bytes(lengths: 1...9)).withLengthByte(at: 1)
        case 3:
            let body = rng.bytes(lengths: 0...300)
            let handle = UInt16.random(in: 0...0x0EFF, using: &rng) | 0x2000
            return HCIPacket(.acl, [UInt8(handle & 0xFF), UInt8(handle >> 8), UInt8(body.count & 0xFF), UInt8(body.count >> 8)] + body)
        case 4:
            let body = rng.bytes(lengths: 0...60)
            return HCIPacket(.sco, [0x05, 0x00, UInt8(body.count)] + body)
        default:
            return HCIPacket(.event, [0x05, 0x04] + rng.bytes(4))
        }
    }
}

extension HCIPacket {
    /// Sets the u8 length field at `index` to the number of bytes after it.
    func withLengthByte(at index: Int) -> HCIPacket {
        var copy = self
        copy.bytes[index] = UInt8(copy.bytes.count - index - 1)
        return copy
    }
}

func stream(_ packets: [HCIPacket]) -> [UInt8] { packets.flatMap(\.h4Bytes) }

/// A scratch path unique to this process, the same for the same name.
func temporaryPath(_ name: String) -> String { TestScratch.root + "/" + name }

/// Runs a shell command; returns (exit status, its stdout).
func shell(_ command: String) -> (status: Int32, output: String) {
    guard let pipe = popen(command, "r") else { return (-1, "popen failed") }
    var output: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 4096)
    while true {
        let count = fread(&buffer, 1, buffer.count, pipe)
        if count == 0 { break }
        output += buffer[0..<count]
    }
    let status = pclose(pipe)
    return ((status >> 8) & 0xFF, String(decoding: output, as: UTF8.self))
}
