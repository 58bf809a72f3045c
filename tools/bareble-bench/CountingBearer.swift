import BluetoothCore
import ATT
import GATT

/// An ATT bearer around the real one that records the requests going through it.
final class CountingBearer<Inner: ATTBearer>: ATTBearer {
    let inner: Inner
    private let requests = Lock<[ATTPDU]>([])

    init(_ inner: Inner) { self.inner = inner }

    /// What the requests sent since the last call were for.
    func takeCounts() -> RequestCounts {
        RequestCounts(requests.withLock { requests in
            defer { requests = [] }
            return requests
        })
    }

    func start(
        receive: @escaping @Sendable ([UInt8]) -> Void, oversized: @escaping @Sendable (ATTOpcode?, Int) -> Void,
        closed: @escaping @Sendable (ATTBearerError) -> Void
    ) {
        inner.start(receive: receive, oversized: oversized, closed: closed)
    }

    func send(_ pdu: [UInt8]) throws(ATTBearerError) {
        if let first = pdu.first, ATTOpcode(rawValue: first).kind == .request, let request = try? ATTPDU(decoding: pdu) {
            requests.withLock { $0.append(request) }
        }
        try inner.send(pdu)
    }

    var mtu: UInt16 { inner.mtu }
    var mtuIsNegotiatedBelow: Bool { inner.mtuIsNegotiatedBelow }
    var maximumMTU: UInt16? { inner.maximumMTU }
    var sendNeverWaits: Bool { inner.sendNeverWaits }
    func mtuExchanged(_ mtu: UInt16) { inner.mtuExchanged(mtu) }
    func close(reason: ATTBearerError) { inner.close(reason: reason) }
}

/// Requests sorted by the GATT procedure they serve (Core 5.4 Vol 3 Part G 4).
struct RequestCounts {
    var services = 0, includes = 0, characteristics = 0, descriptors = 0
    /// Read, Read Blob, Read Using Characteristic UUID (the Database Hash).
    var reads = 0
    var other = 0

    var discovery: Int { services + includes + characteristics + descriptors }
    var total: Int { discovery + reads + other }

    init(_ requests: [ATTPDU]) {
        for request in requests {
            switch request {
            case .readByGroupTypeRequest, .findByTypeValueRequest: services += 1
            case .readByTypeRequest(let read) where read.attributeType == GATTUUID.include: includes += 1
            case .readByTypeRequest(let read) where read.attributeType == GATTUUID.characteristicDeclaration: characteristics += 1
            case .findInformationRequest: descriptors += 1
            case .readRequest, .readBlobRequest, .readByTypeRequest: reads += 1
            default: other += 1
            }
        }
    }

    var breakdown: String {
        "\(discovery) discovery (services \(services), includes \(includes), characteristics \(characteristics), descriptors \(descriptors)), \(reads) reads, \(other) other"
    }
}
