import BluetoothCore
import HCI
import Testing
import TestSupport

/// Seeded random input against every event decoder. The properties: decoding never traps,
/// fails only with a `DecodeError`, a packet whose header selects a modelled event never
/// decodes to `.unknown`, and whatever decodes re-encodes to bytes that decode to the same
/// value. Seeds are fixed, so a failure replays exactly.
@Suite struct EventFuzzTests {
    static let inputsPerDecoder = 100_000

    /// Event codes and LE subevent codes that must never decode to `.unknown`.
    static let modelledCodes: Set<UInt8> = Set(EventDecoderCase.all.filter { $0.header.count == 1 }.map { $0.header[0] })
    static let modelledSubeventCodes: Set<UInt8> = Set(EventDecoderCase.all.filter { $0.header.count == 2 }.map { $0.header[1] })

    /// Checks the properties for one input: whether it decoded, and the first violation.
    static func check(_ packet: [UInt8]) -> (decoded: Bool, violation: String?) {
        let event: HCIEvent
        do {
            event = try HCIEvent(decoding: packet)
        } catch {
            return (false, nil)  // A typed DecodeError is an acceptable outcome for any input.
        }
        if event.code != packet[0] { return (true, "decoded as code \(event.code): \(Hex.string(packet))") }
        if modelledCodes.contains(packet[0]), case .unknown = event {
            return (true, "modelled event decoded as unknown: \(Hex.string(packet))")
        }
        if case .le(let meta) = event {
            if meta.subeventCode != packet[2] { return (true, "decoded as another subevent: \(Hex.string(packet))") }
            if modelledSubeventCodes.contains(packet[2]), case .unknown = meta {
                return (true, "modelled subevent decoded as unknown: \(Hex.string(packet))")
            }
        }
        let reencoded = event.encode()
        guard let again = try? HCIEvent(decoding: reencoded) else {
            return (true, "re-encoding does not decode: \(Hex.string(packet)) -> \(Hex.string(reencoded))")
        }
        if again != event { return (true, "round trip changed the value: \(Hex.string(packet))") }
        return (true, nil)
    }

    @Test(arguments: EventDecoderCase.all)
    func decoderSurvivesRandomInput(_ decoder: EventDecoderCase) async {
        await cpuBound {
            var random = SeededRandom(seed: 0xB1E5_0000 &+ UInt64(decoder.header.reduce(0) { $0 << 8 | Int($1) }))
            var failures: [String] = []
            var decodedCount = 0
            let headerLength = decoder.header.count - 1  // the subevent code counts as a parameter
            for index in 0..<Self.inputsPerDecoder {
                await yieldPeriodically(iteration: index)
                var packet: [UInt8]
                switch index % 4 {
                case 0:
                    // The decoder's header, then random parameters of random length.
                    let tail = random.fastBytes(random.int(0...min(decoder.maximumTail, 255 - headerLength)))
                    packet = eventPacket(decoder.header[0], Array(decoder.header.dropFirst()) + tail)
                case 1:
                    // A valid value must come back unchanged.
                    let value = decoder.makeValid(&random)
                    packet = value.encode()
                    guard let decoded = try? HCIEvent(decoding: packet), decoded == value else {
                        if failures.count < 5 { failures.append("valid encoding did not round-trip: \(Hex.string(packet))") }
                        continue
                    }
                    decodedCount += 1
                    continue
                case 2:
                    // A valid encoding, damaged in one way.
                    packet = decoder.makeValid(&random).encode()
                    switch random.int(0...3) {
                    case 0:
                        let cut = random.int(2...packet.count)
                        packet = Array(packet.prefix(cut))
                        packet[1] = UInt8(cut - 2)
                    case 1:
                        if packet.count > 2 { packet[random.int(2...packet.count - 1)] = random.byte() }
                    case 2:
                        let extra = random.fastBytes(random.int(1...8))
                        if packet.count - 2 + extra.count <= 255 {
                            packet += extra
                            packet[1] = UInt8(packet.count - 2)
                        }
                    default:
                        packet[1] = random.byte()
                    }
                default:
                    // The decoder's header with a random (usually wrong) length byte.
                    packet = decoder.header.prefix(1) + [random.byte()] + decoder.header.dropFirst()
                        + random.fastBytes(random.int(0...decoder.maximumTail))
                }
                let outcome = Self.check(packet)
                if outcome.decoded { decodedCount += 1 }
                if let failure = outcome.violation, failures.count < 5 { failures.append(failure) }
            }
            #expect(failures.isEmpty, "\(decoder): \(failures.joined(separator: "\n"))")
            // The loop is only meaningful if a fair share of inputs reach a successful decode.
            #expect(decodedCount >= Self.inputsPerDecoder / 4)
        }
    }

    @Test func fullyRandomPacketsNeverTrap() async {
        await cpuBound {
            var random = SeededRandom(seed: 0xE7E7)
            var failures: [String] = []
            for index in 0..<Self.inputsPerDecoder {
                await yieldPeriodically(iteration: index)
                let packet: [UInt8]
                if index.isMultiple(of: 2) {
                    packet = random.fastBytes(random.int(0...257))
                } else {
                    // A consistent length byte, so the decoders behind every code are reached.
                    packet = eventPacket(random.byte(), random.fastBytes(random.int(0...255)))
                }
                if let failure = Self.check(packet).violation, failures.count < 5 { failures.append(failure) }
            }
            #expect(failures.isEmpty, "\(failures.joined(separator: "\n"))")
        }
    }

    @Test func randomLESubeventsNeverTrap() async {
        await cpuBound {
            var random = SeededRandom(seed: 0x3E3E)
            var failures: [String] = []
            for iteration in 0..<Self.inputsPerDecoder {
                await yieldPeriodically(iteration: iteration)
                let parameters = [random.byte()] + random.fastBytes(random.int(0...254))
                if let failure = Self.check(eventPacket(0x3E, parameters)).violation, failures.count < 5 {
                    failures.append(failure)
                }
            }
            #expect(failures.isEmpty, "\(failures.joined(separator: "\n"))")
        }
    }
}
