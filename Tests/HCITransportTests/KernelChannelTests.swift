import BluetoothCore
@testable import HCITransport
import Testing

/// The pure parts of the kernel's HCI channels: monitor index records, the raw channel's
/// filter (management replies: KernelHostTests). The sockets themselves are exercised in
/// the kernel lane.
@Suite struct KernelChannelTests {
    @Test func monitorNewAndDeleteIndex() throws {
        // opcode 0 (New Index), index 0, length 16: primary, virtual bus, F0:0D:00:00:02:00, "hci0".
        let bytes: [UInt8] = [0x00, 0x00, 0x00, 0x00, 0x10, 0x00, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x0D, 0xF0]
            + Array("hci0".utf8) + [0, 0, 0, 0]
        let record = try MonitorRecord(decoding: bytes)
        #expect(record.opcode == .newIndex && record.index == 0)
        let index = try #require(record.newIndex)
        #expect(index.address == BluetoothAddress(0xF00D_0000_0200))
        #expect(index.name == "hci0" && index.bus == 0 && index.type == 0)

        let deleted = try MonitorRecord(decoding: [0x01, 0x00, 0x01, 0x00, 0x00, 0x00])
        #expect(deleted.opcode == .deleteIndex && deleted.index == 1 && deleted.payload.isEmpty)
        #expect(deleted.newIndex == nil)

        let note = try MonitorRecord(decoding: [0x0C, 0x00, 0xFF, 0xFF, 0x06, 0x00] + Array("Linux".utf8) + [0])
        #expect(note.note == "Linux" && note.index == 0xFFFF)
    }

    @Test func monitorRecordsThatDoNotAddUp() {
        #expect(throws: DecodeError.self) { try MonitorRecord(decoding: [0x00, 0x00, 0x00]) }
        #expect(throws: DecodeError.self) { try MonitorRecord(decoding: [0x0C, 0x00, 0xFF, 0xFF, 0x09, 0x00, 0x41]) }
        // A New Index record whose payload is short or long is a record, not an index.
        let short = try? MonitorRecord(decoding: [0x00, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00])
        #expect(short != nil && short?.newIndex == nil)
    }

    @Test func rawFilterPassesOnlyWhatAHostBesideTheKernelNeeds() {
        let filter = HCIRawFilter.hostSideLE
        #expect(filter.passes(type: HCIPacketType.event.rawValue, eventCode: 0x0E))
        #expect(filter.passes(type: HCIPacketType.event.rawValue, eventCode: 0x3E))
        #expect(!filter.passes(type: HCIPacketType.event.rawValue, eventCode: 0x05))  // Disconnection Complete
        #expect(!filter.passes(type: HCIPacketType.acl.rawValue, eventCode: nil))
        #expect(HCIRawFilter.everything.passes(type: HCIPacketType.acl.rawValue, eventCode: nil))
        #expect(HCIRawFilter.everything.passes(type: HCIPacketType.event.rawValue, eventCode: 0x05))
    }
}
