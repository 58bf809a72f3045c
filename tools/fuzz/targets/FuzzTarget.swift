/// One fuzz target: a name (its corpus directory) and what it does with one input. A
/// finding is a crash: a trap in the code under test, an AddressSanitizer report, or a
/// violated invariant (``expect(_:_:)``).
struct FuzzTarget: Sendable {
    let name: String
    let run: @Sendable ([UInt8]) -> Void

    /// Set once in main before libFuzzer starts; libFuzzer's callback is a C function
    /// pointer and cannot capture the choice.
    nonisolated(unsafe) static var selected: FuzzTarget?

    static func named(_ name: String) -> FuzzTarget? { all.first { $0.name == name } }

    static let all: [FuzzTarget] = [
        FuzzTarget(name: "h4-framer", run: HCITargets.h4Framer),
        FuzzTarget(name: "hci-event", run: HCITargets.event),
        FuzzTarget(name: "acl-reassembly", run: L2CAPTargets.aclReassembly),
        FuzzTarget(name: "l2cap-signaling", run: L2CAPTargets.signaling),
        FuzzTarget(name: "att-pdu", run: ATTTargets.pdu),
        FuzzTarget(name: "att-client", run: ATTClientTarget.client),
        FuzzTarget(name: "att-server", run: ATTServerTarget.server),
        FuzzTarget(name: "gatt-discovery", run: GATTDiscoveryTarget.discovery),
        FuzzTarget(name: "gatt-server-store", run: GATTServerStoreTarget.store),
        FuzzTarget(name: "smp-pdu", run: SMPTargets.pdu),
        FuzzTarget(name: "pairing-initiator", run: { SMPTargets.pairing(.initiator, $0) }),
        FuzzTarget(name: "pairing-responder", run: { SMPTargets.pairing(.responder, $0) }),
        FuzzTarget(name: "advertising-data", run: AdvertisingTargets.advertisingData),
        FuzzTarget(name: "beacon", run: AdvertisingTargets.beacon),
        FuzzTarget(name: "bond-file", run: FileTargets.bondFile),
        FuzzTarget(name: "btsnoop", run: FileTargets.btsnoop),
        FuzzTarget(name: "trace", run: FileTargets.trace),
        FuzzTarget(name: "uuid-text", run: CoreTargets.uuidText),
        FuzzTarget(name: "ancs-session", run: ANCSTargets.session),
    ]
}

/// An invariant of the code under test; its violation is a finding.
func expect(_ condition: Bool, _ message: @autoclosure () -> String) {
    if !condition { fatalError("invariant violated: \(message())") }
}

/// Splits fuzz bytes into length-prefixed pieces (a length byte, then up to that many
/// bytes): how a target turns one input into a sequence of packets or calls.
struct FuzzPieces: Sequence, IteratorProtocol {
    var bytes: ArraySlice<UInt8>

    init(_ bytes: [UInt8]) { self.bytes = bytes[...] }

    mutating func next() -> [UInt8]? {
        guard let length = bytes.popFirst() else { return nil }
        let piece = Array(bytes.prefix(Int(length)))
        bytes = bytes.dropFirst(Int(length))
        return piece
    }
}
