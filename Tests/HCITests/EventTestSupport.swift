import BluetoothCore
import HCI
import TestSupport

// Random values and helpers shared by the event and ACL tests.

extension SeededRandom {
    /// Random bytes, eight per draw: the fuzz loops spend most of their time here.
    mutating func fastBytes(_ count: Int) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(count)
        while out.count < count {
            var word = next()
            for _ in 0..<min(8, count - out.count) {
                out.append(UInt8(truncatingIfNeeded: word))
                word >>= 8
            }
        }
        return out
    }

    mutating func byte() -> UInt8 { UInt8(truncatingIfNeeded: next()) }
    mutating func signedByte() -> Int8 { Int8(truncatingIfNeeded: next()) }
    mutating func word() -> UInt16 { UInt16(truncatingIfNeeded: next()) }
    mutating func handle() -> UInt16 { word() & 0x0FFF }
    mutating func address() -> BluetoothAddress { BluetoothAddress(next()) }
    mutating func int(_ range: ClosedRange<Int>) -> Int { Int.random(in: range, using: &self) }
    mutating func status() -> HCIErrorCode { HCIErrorCode(rawValue: byte()) }
    mutating func addressType() -> ReportedAddressType { ReportedAddressType(rawValue: byte()) }
    mutating func phy() -> LEPHY { LEPHY(rawValue: byte()) }
    mutating func role() -> ConnectionRole { ConnectionRole(rawValue: byte()) }
}

/// Random, valid values of every modelled event, each fitting in one event packet.
enum RandomEvents {
    static func commandComplete(_ r: inout SeededRandom) -> HCIEvent {
        .commandComplete(.init(numHCICommandPackets: r.byte(), opcode: HCIOpcode(rawValue: r.word()), returnParameters: r.fastBytes(r.int(0...252))))
    }

    static func commandStatus(_ r: inout SeededRandom) -> HCIEvent {
        .commandStatus(.init(status: r.status(), numHCICommandPackets: r.byte(), opcode: HCIOpcode(rawValue: r.word())))
    }

    static func disconnectionComplete(_ r: inout SeededRandom) -> HCIEvent {
        .disconnectionComplete(.init(status: r.status(), connectionHandle: r.handle(), reason: r.status()))
    }

    static func encryptionChange(_ r: inout SeededRandom) -> HCIEvent {
        .encryptionChange(.init(status: r.status(), connectionHandle: r.handle(), encryptionEnabled: r.byte(), keySize: r.int(0...1) == 0 ? nil : r.byte()))
    }

    static func encryptionKeyRefreshComplete(_ r: inout SeededRandom) -> HCIEvent {
        .encryptionKeyRefreshComplete(.init(status: r.status(), connectionHandle: r.handle()))
    }

    static func numberOfCompletedPackets(_ r: inout SeededRandom) -> HCIEvent {
        let count = r.int(0...63)
        return .numberOfCompletedPackets(.init(completions: (0..<count).map { _ in
            .init(connectionHandle: r.handle(), completedPackets: r.word())
        }))
    }

    static func hardwareError(_ r: inout SeededRandom) -> HCIEvent { .hardwareError(.init(hardwareCode: r.byte())) }

    static func dataBufferOverflow(_ r: inout SeededRandom) -> HCIEvent { .dataBufferOverflow(.init(linkType: r.byte())) }

    static func connectionComplete(_ r: inout SeededRandom) -> HCIEvent {
        .le(.connectionComplete(.init(
            status: r.status(), connectionHandle: r.handle(), role: r.role(), peerAddressType: r.addressType(),
            peerAddress: r.address(), connectionInterval: r.word(), peripheralLatency: r.word(),
            supervisionTimeout: r.word(), centralClockAccuracy: r.byte()
        )))
    }

    static func advertisingReport(_ r: inout SeededRandom) -> HCIEvent {
        // 253 bytes after the subevent code and the count.
        var budget = 253
        var reports: [LEAdvertisingReport.Report] = []
        for _ in 0..<r.int(0...6) where budget >= 10 {
            let data = r.fastBytes(r.int(0...min(31, budget - 10)))
            budget -= 10 + data.count
            reports.append(.init(eventType: .init(rawValue: r.byte()), addressType: r.addressType(), address: r.address(), data: data, rssi: r.signedByte()))
        }
        return .le(.advertisingReport(.init(reports: reports)))
    }

    static func connectionUpdateComplete(_ r: inout SeededRandom) -> HCIEvent {
        .le(.connectionUpdateComplete(.init(status: r.status(), connectionHandle: r.handle(), connectionInterval: r.word(), peripheralLatency: r.word(), supervisionTimeout: r.word())))
    }

    static func readRemoteFeaturesComplete(_ r: inout SeededRandom) -> HCIEvent {
        .le(.readRemoteFeaturesComplete(.init(status: r.status(), connectionHandle: r.handle(), leFeatures: r.next())))
    }

    static func longTermKeyRequest(_ r: inout SeededRandom) -> HCIEvent {
        .le(.longTermKeyRequest(.init(connectionHandle: r.handle(), randomNumber: r.next(), encryptedDiversifier: r.word())))
    }

    static func dataLengthChange(_ r: inout SeededRandom) -> HCIEvent {
        .le(.dataLengthChange(.init(connectionHandle: r.handle(), maxTxOctets: r.word(), maxTxTime: r.word(), maxRxOctets: r.word(), maxRxTime: r.word())))
    }

    static func enhancedConnectionComplete(_ r: inout SeededRandom) -> HCIEvent {
        let version: LEEnhancedConnectionComplete.Version = r.int(0...1) == 0 ? .v1 : .v2(advertisingHandle: r.byte(), syncHandle: r.word())
        return .le(.enhancedConnectionComplete(.init(
            version: version, status: r.status(), connectionHandle: r.handle(), role: r.role(),
            peerAddressType: r.addressType(), peerAddress: r.address(), localResolvablePrivateAddress: r.address(),
            peerResolvablePrivateAddress: r.address(), connectionInterval: r.word(), peripheralLatency: r.word(),
            supervisionTimeout: r.word(), centralClockAccuracy: r.byte()
        )))
    }

    static func directedAdvertisingReport(_ r: inout SeededRandom) -> HCIEvent {
        let count = r.int(0...15)
        return .le(.directedAdvertisingReport(.init(reports: (0..<count).map { _ in
            .init(eventType: .init(rawValue: r.byte()), addressType: r.addressType(), address: r.address(), directAddressType: r.addressType(), directAddress: r.address(), rssi: r.signedByte())
        })))
    }

    static func phyUpdateComplete(_ r: inout SeededRandom) -> HCIEvent {
        .le(.phyUpdateComplete(.init(status: r.status(), connectionHandle: r.handle(), txPHY: r.phy(), rxPHY: r.phy())))
    }

    static func extendedAdvertisingReport(_ r: inout SeededRandom) -> HCIEvent {
        var budget = 253
        var reports: [LEExtendedAdvertisingReport.Report] = []
        for _ in 0..<r.int(0...4) where budget >= 24 {
            let data = r.fastBytes(r.int(0...min(229, budget - 24)))
            budget -= 24 + data.count
            reports.append(.init(
                eventType: .init(rawValue: r.word()), addressType: r.addressType(), address: r.address(),
                primaryPHY: r.phy(), secondaryPHY: r.phy(), advertisingSID: r.byte(), txPower: r.signedByte(),
                rssi: r.signedByte(), periodicAdvertisingInterval: r.word(), directAddressType: r.addressType(),
                directAddress: r.address(), data: data
            ))
        }
        return .le(.extendedAdvertisingReport(.init(reports: reports)))
    }

    static func scanTimeout(_ r: inout SeededRandom) -> HCIEvent { .le(.scanTimeout(.init())) }

    static func advertisingSetTerminated(_ r: inout SeededRandom) -> HCIEvent {
        .le(.advertisingSetTerminated(.init(status: r.status(), advertisingHandle: r.byte(), connectionHandle: r.handle(), numCompletedExtendedAdvertisingEvents: r.byte())))
    }

    static func scanRequestReceived(_ r: inout SeededRandom) -> HCIEvent {
        .le(.scanRequestReceived(.init(advertisingHandle: r.byte(), scannerAddressType: r.addressType(), scannerAddress: r.address())))
    }

    static func channelSelectionAlgorithm(_ r: inout SeededRandom) -> HCIEvent {
        .le(.channelSelectionAlgorithm(.init(connectionHandle: r.handle(), channelSelectionAlgorithm: r.byte())))
    }
}

/// One decoder under test: the header bytes that select it and a source of valid values.
struct EventDecoderCase: Sendable, CustomStringConvertible {
    var name: String
    /// Event code, then the subevent code for LE Meta subevents.
    var header: [UInt8]
    /// The longest random parameter tail worth trying: a little past the largest valid size.
    var maximumTail: Int
    var makeValid: @Sendable (inout SeededRandom) -> HCIEvent

    var description: String { name }

    static let all: [EventDecoderCase] = [
        .init(name: "Command Complete", header: [0x0E], maximumTail: 255, makeValid: RandomEvents.commandComplete),
        .init(name: "Command Status", header: [0x0F], maximumTail: 8, makeValid: RandomEvents.commandStatus),
        .init(name: "Disconnection Complete", header: [0x05], maximumTail: 8, makeValid: RandomEvents.disconnectionComplete),
        .init(name: "Encryption Change v1", header: [0x08], maximumTail: 8, makeValid: RandomEvents.encryptionChange),
        .init(name: "Encryption Change v2", header: [0x59], maximumTail: 8, makeValid: RandomEvents.encryptionChange),
        .init(name: "Encryption Key Refresh Complete", header: [0x30], maximumTail: 8, makeValid: RandomEvents.encryptionKeyRefreshComplete),
        .init(name: "Number Of Completed Packets", header: [0x13], maximumTail: 255, makeValid: RandomEvents.numberOfCompletedPackets),
        .init(name: "Hardware Error", header: [0x10], maximumTail: 4, makeValid: RandomEvents.hardwareError),
        .init(name: "Data Buffer Overflow", header: [0x1A], maximumTail: 4, makeValid: RandomEvents.dataBufferOverflow),
        .init(name: "LE Connection Complete", header: [0x3E, 0x01], maximumTail: 24, makeValid: RandomEvents.connectionComplete),
        .init(name: "LE Advertising Report", header: [0x3E, 0x02], maximumTail: 254, makeValid: RandomEvents.advertisingReport),
        .init(name: "LE Connection Update Complete", header: [0x3E, 0x03], maximumTail: 14, makeValid: RandomEvents.connectionUpdateComplete),
        .init(name: "LE Read Remote Features Complete", header: [0x3E, 0x04], maximumTail: 16, makeValid: RandomEvents.readRemoteFeaturesComplete),
        .init(name: "LE Long Term Key Request", header: [0x3E, 0x05], maximumTail: 16, makeValid: RandomEvents.longTermKeyRequest),
        .init(name: "LE Data Length Change", header: [0x3E, 0x07], maximumTail: 14, makeValid: RandomEvents.dataLengthChange),
        .init(name: "LE Enhanced Connection Complete v1", header: [0x3E, 0x0A], maximumTail: 36, makeValid: RandomEvents.enhancedConnectionComplete),
        .init(name: "LE Enhanced Connection Complete v2", header: [0x3E, 0x29], maximumTail: 36, makeValid: RandomEvents.enhancedConnectionComplete),
        .init(name: "LE Directed Advertising Report", header: [0x3E, 0x0B], maximumTail: 254, makeValid: RandomEvents.directedAdvertisingReport),
        .init(name: "LE PHY Update Complete", header: [0x3E, 0x0C], maximumTail: 8, makeValid: RandomEvents.phyUpdateComplete),
        .init(name: "LE Extended Advertising Report", header: [0x3E, 0x0D], maximumTail: 254, makeValid: RandomEvents.extendedAdvertisingReport),
        .init(name: "LE Scan Timeout", header: [0x3E, 0x11], maximumTail: 4, makeValid: RandomEvents.scanTimeout),
        .init(name: "LE Advertising Set Terminated", header: [0x3E, 0x12], maximumTail: 8, makeValid: RandomEvents.advertisingSetTerminated),
        .init(name: "LE Scan Request Received", header: [0x3E, 0x13], maximumTail: 12, makeValid: RandomEvents.scanRequestReceived),
        .init(name: "LE Channel Selection Algorithm", header: [0x3E, 0x14], maximumTail: 6, makeValid: RandomEvents.channelSelectionAlgorithm),
    ]
}

/// An event packet from a code and raw parameters, with a correct length byte.
func eventPacket(_ code: UInt8, _ parameters: [UInt8]) -> [UInt8] {
    [code, UInt8(parameters.count)] + parameters
}
