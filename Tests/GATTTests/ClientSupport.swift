import ATT
import BluetoothCore
import GATT
import TestSupport

/// A GATT client over a scripted ATT server (BlueZ unit/test-gatt.c style).
/// The transaction timeout of a test whose server holds an answer until the test lets it
/// go: a full parallel run can keep the test from running again for longer than ATT's 30 s
/// (one such run timed out a held Prepare Write), and under AddressSanitizer for longer
/// than the GATT procedure's 120 s, so ``makeGATT(_:mtu:timeout:unscripted:)`` gives the
/// procedure at least as long (a run past 120 s cancelled a held long write's queue with
/// an Execute Write the script did not expect, and waited 600 s for its answer).
let heldStepTimeout: Duration = .seconds(600)

func makeGATT(
    _ script: [ScriptedBearer.Step], mtu: UInt16 = 23, timeout: Duration = unhurried,
    unscripted: Set<ATTOpcode> = []
) -> (GATTClient, ScriptedBearer) {
    let bearer = ScriptedBearer(script, mtu: mtu, unscripted: unscripted)
    let procedureTimeout = max(GATTClient.defaultProcedureTimeout, timeout)
    return (GATTClient(att: ATTClient(bearer: bearer, transactionTimeout: timeout), procedureTimeout: procedureTimeout), bearer)
}

/// Runs `body` and returns its typed error, or nil when it succeeded.
func gattError<T>(_ body: () async throws(GATTError) -> T) async -> GATTError? {
    do {
        _ = try await body()
        return nil
    } catch {
        return error
    }
}

/// The opcodes of discovery requests, to count them in what a client sent.
let discoveryOpcodes: Set<UInt8> = [0x04, 0x06, 0x10]
func isDiscoveryRequest(_ pdu: [UInt8]) -> Bool {
    guard let opcode = pdu.first else { return false }
    if discoveryOpcodes.contains(opcode) { return true }
    // Read By Type for includes (0x2802) or characteristic declarations (0x2803).
    return opcode == 0x08 && pdu.count == 7 && pdu[6] == 0x28 && (pdu[5] == 0x02 || pdu[5] == 0x03)
}

/// A small server database at ATT_MTU 23, discovered with these exchanges:
///
///     0x0001-0x0005 Generic Access   0x0002 Device Name (read) 0x0004 Appearance (read)
///     0x0006-0x000B Generic Attribute 0x0007 Service Changed (indicate), CCCD 0x0009
///                                     0x000A Database Hash (read, value 0x000B)
///     0x000C-0x0011 Heart Rate        0x000D Measurement (notify), CCCD 0x000F
///                                     0x0010 Body Sensor Location (read)
enum SampleServer {
    static let hash = "00 11 22 33 44 55 66 77 88 99 AA BB CC DD EE FF"
    static let otherHash = "FF EE DD CC BB AA 99 88 77 66 55 44 33 22 11 00"

    /// Discover all primary services, includes, characteristics, descriptors: 7 round trips.
    static let discovery: [ScriptedBearer.Step] = [
        // Discover All Primary Services: three services fit one response; then the end.
        step("10 01 00 FF FF 00 28", "11 06 01 00 05 00 00 18 06 00 0B 00 01 18 0C 00 11 00 0D 18"),
        step("10 12 00 FF FF 00 28", "01 10 12 00 0A"),
        // Find Included Services over the span of all services at once.
        step("08 01 00 11 00 02 28", "01 08 01 00 0A"),
        // Discover All Characteristics: three per response; the last value ends the span.
        step("08 01 00 11 00 03 28", "09 07 02 00 02 03 00 00 2A 04 00 02 05 00 01 2A 07 00 20 08 00 05 2A"),
        step("08 09 00 11 00 03 28", "09 07 0A 00 02 0B 00 2A 2B 0D 00 10 0E 00 37 2A 10 00 02 11 00 38 2A"),
        // Discover All Characteristic Descriptors, only where there is room for one.
        step("04 09 00 09 00", "05 01 09 00 02 29"),
        step("04 0F 00 0F 00", "05 01 0F 00 02 29"),
    ]
    static let readHash = step("08 01 00 FF FF 2A 2B", "09 12 0B 00 \(hash)")
    static let readOtherHash = step("08 01 00 FF FF 2A 2B", "09 12 0B 00 \(otherHash)")
    static let subscribeServiceChanged = step("12 09 00 02 00", "13")

    static var database: GATTDatabase {
        let cccd = GATTUUID.clientCharacteristicConfiguration
        return GATTDatabase(services: [
            .init(uuid: GATTUUID.genericAccess, handles: 0x0001...0x0005, characteristics: [
                .init(handle: 0x0002, properties: .read, valueHandle: 0x0003, uuid: GATTUUID.deviceName, endHandle: 0x0003),
                .init(handle: 0x0004, properties: .read, valueHandle: 0x0005, uuid: GATTUUID.appearance, endHandle: 0x0005),
            ]),
            .init(uuid: GATTUUID.genericAttribute, handles: 0x0006...0x000B, characteristics: [
                .init(handle: 0x0007, properties: .indicate, valueHandle: 0x0008, uuid: GATTUUID.serviceChanged, endHandle: 0x0009,
                      descriptors: [.init(handle: 0x0009, uuid: cccd)]),
                .init(handle: 0x000A, properties: .read, valueHandle: 0x000B, uuid: GATTUUID.databaseHash, endHandle: 0x000B),
            ]),
            .init(uuid: GATTUUID.heartRate, handles: 0x000C...0x0011, characteristics: [
                .init(handle: 0x000D, properties: .notify, valueHandle: 0x000E, uuid: GATTUUID.heartRateMeasurement, endHandle: 0x000F,
                      descriptors: [.init(handle: 0x000F, uuid: cccd)]),
                .init(handle: 0x0010, properties: .read, valueHandle: 0x0011, uuid: GATTUUID.bodySensorLocation, endHandle: 0x0011),
            ]),
        ], databaseHash: Hex.bytes(hash))
    }
}

/// Hex of `count` bytes counting up from `start`.
func bytesHex(_ count: Int, from start: Int = 0) -> String {
    (0..<count).map { Hex.string([UInt8(truncatingIfNeeded: start + $0)]) }.joined(separator: " ")
}
