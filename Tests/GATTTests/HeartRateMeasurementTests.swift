import BluetoothCore
import GATT
import Testing

@Suite struct HeartRateMeasurementTests {
    @Test func decodesEightBitRate() throws {
        let measurement = try HeartRateMeasurement(bytes: [0x00, 0x48])
        #expect(measurement.heartRate == 72)
        #expect(measurement.sensorContact == .notSupported)
        #expect(measurement.energyExpended == nil)
        #expect(measurement.rrIntervals.isEmpty)
        #expect(measurement.description == "72 bpm")
    }

    @Test func decodesContactAndRRIntervals() throws {
        // 0x16 = RR intervals present (bit 4) | contact supported (bit 2) | contact detected
        // (bit 1); bit 0 clear, so the rate is the one byte 0x48. Two RR intervals follow:
        // 0x0300 = 768/1024 s = 750 ms and 0x0400 = 1024/1024 s = 1000 ms.
        let measurement = try HeartRateMeasurement(bytes: [0x16, 0x48, 0x00, 0x03, 0x00, 0x04])
        #expect(measurement.heartRate == 72)
        #expect(measurement.sensorContact == .detected)
        #expect(measurement.rrIntervals == [0x0300, 0x0400])
        #expect(measurement.rrIntervalsMilliseconds == [750, 1000])
        #expect(measurement.description == "72 bpm, contact detected, RR 750 ms, 1000 ms")
    }

    @Test func rejectsAnOddByteAfterTheRRIntervals() {
        // The same value with one more byte: half an RR interval is not a value.
        #expect(throws: DecodeError.trailingBytes(count: 1)) {
            try HeartRateMeasurement(bytes: [0x16, 0x48, 0x00, 0x03, 0x00, 0x04, 0x00])
        }
    }

    @Test func decodesSixteenBitRateAndEnergy() throws {
        // 0x0D = energy present (bit 3) | contact supported (bit 2) | 16-bit rate (bit 0):
        // rate 0x012C = 300 bpm, energy 0x0400 = 1024 kJ, contact supported but not detected.
        let measurement = try HeartRateMeasurement(bytes: [0x0D, 0x2C, 0x01, 0x00, 0x04])
        #expect(measurement.heartRate == 300)
        #expect(measurement.energyExpended == 1024)
        #expect(measurement.sensorContact == .notDetected)
        #expect(measurement.description == "300 bpm, no contact, energy 1024 kJ")
    }

    @Test func printsFractionalMilliseconds() throws {
        let measurement = try HeartRateMeasurement(bytes: [0x10, 0x3C, 0x01, 0x00, 0x33, 0x03])
        // 1/1024 s = 0.977 ms -> "1", 0x0333 = 819/1024 s = 799.8 ms.
        #expect(measurement.description == "60 bpm, RR 1 ms, 799.8 ms")
    }

    /// Every combination of the five defined flag bits, with the reserved bits set half the
    /// time: the decoder reads each announced field and nothing else, the value round trips,
    /// and every shorter prefix of the fixed fields is truncated.
    @Test func decodesEveryFlagCombination() throws {
        for flags in UInt8(0)...0xFF {
            let sixteen = flags & 0x01 != 0
            let energy = flags & 0x08 != 0
            let intervals = flags & 0x10 != 0
            var bytes: [UInt8] = [flags]
            bytes += sixteen ? [0x2C, 0x01] : [0x48]
            if energy { bytes += [0x34, 0x12] }
            let fixedLength = bytes.count
            if intervals { bytes += [0x00, 0x04, 0x00, 0x02] }

            let measurement = try HeartRateMeasurement(bytes: bytes)
            #expect(measurement.heartRate == (sixteen ? 300 : 72))
            #expect(measurement.energyExpended == (energy ? 0x1234 : nil))
            #expect(measurement.rrIntervals == (intervals ? [0x0400, 0x0200] : []))
            let contact: HeartRateMeasurement.SensorContact = switch flags & 0x06 {
            case 0x06: .detected
            case 0x04: .notDetected
            default: .notSupported
            }
            #expect(measurement.sensorContact == contact)
            #expect(measurement.bytes == bytes)

            for length in 0..<fixedLength {
                #expect(throws: DecodeError.self, "flags \(flags) length \(length)") {
                    try HeartRateMeasurement(bytes: Array(bytes.prefix(length)))
                }
            }
            // One stray byte: trailing without RR intervals, half an interval with them.
            #expect(throws: DecodeError.trailingBytes(count: 1)) { try HeartRateMeasurement(bytes: bytes + [0xAA]) }
        }
    }

    @Test func rejectsEmptyAndTruncatedFields() {
        #expect(throws: DecodeError.truncated(needed: 1, available: 0)) { try HeartRateMeasurement(bytes: []) }
        #expect(throws: DecodeError.truncated(needed: 1, available: 0)) { try HeartRateMeasurement(bytes: [0x00]) }
        #expect(throws: DecodeError.truncated(needed: 2, available: 1)) { try HeartRateMeasurement(bytes: [0x01, 0x48]) }
        #expect(throws: DecodeError.truncated(needed: 2, available: 1)) { try HeartRateMeasurement(bytes: [0x08, 0x48, 0x01]) }
        #expect(throws: DecodeError.trailingBytes(count: 1)) { try HeartRateMeasurement(bytes: [0x00, 0x48, 0x00]) }
    }

    @Test func acceptsRRFlagWithNoIntervals() throws {
        // A sensor may set bit 4 in a measurement whose intervals did not fit: none follow.
        #expect(try HeartRateMeasurement(bytes: [0x10, 0x48]).rrIntervals == [])
    }

    @Test func decodesThroughTheRegistry() throws {
        let decoded = try CharacteristicValueDecoder.standard.decode([0x00, 0x48], uuid: GATTUUID.heartRateMeasurement)?.get()
        guard case .heartRateMeasurement(let measurement) = decoded else { Issue.record("not a measurement"); return }
        #expect(measurement.heartRate == 72)
    }
}
