import ATT
import Dispatch
import GATT

/// A full discovery (services, includes, characteristics, descriptors) against a server
/// whose every response is fuzz bytes, one length-prefixed piece per request.
enum GATTDiscoveryTarget {
    @Sendable static func discovery(_ bytes: [UInt8]) {
        let bearer = ATTClientTarget.DirectBearer(replies: Array(FuzzPieces(bytes)))
        let gatt = GATTClient(att: ATTClient(bearer: bearer))
        // libFuzzer calls in synchronously; the bearer answers inside `send` and drops the
        // link when the replies run out, so the discovery always ends without a timer.
        let finished = DispatchSemaphore(value: 0)
        Task {
            _ = try? await gatt.discover()
            finished.signal()
        }
        finished.wait()
    }
}
