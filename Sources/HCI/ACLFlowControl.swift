/// Host-side accounting of the controller's ACL data buffers (Core Vol 4 Part E 4.1.1).
///
/// The host may have at most `total` ACL packets inside the controller. Each sent packet
/// takes a credit; Number Of Completed Packets gives credits back, and so does a
/// disconnection for every packet still outstanding on that handle (the controller
/// flushes them).
struct ACLFlowControl: Sendable {
    private(set) var total: Int
    private(set) var available: Int
    private var outstanding: [UInt16: Int] = [:]

    init(total: Int) {
        self.total = max(0, total)
        self.available = max(0, total)
    }

    /// Takes a credit for a packet on `handle`; false when the controller is full.
    mutating func acquire(handle: UInt16) -> Bool {
        guard available > 0 else { return false }
        available -= 1
        outstanding[handle, default: 0] += 1
        return true
    }

    /// Returns credits reported by Number Of Completed Packets. A controller that reports
    /// more than was outstanding on a handle is trusted only up to what was outstanding,
    /// so a buggy count can never raise the credit above the buffer total.
    mutating func complete(handle: UInt16, count: Int) {
        let pending = outstanding[handle, default: 0]
        let returned = min(max(0, count), pending)
        available = min(total, available + returned)
        if pending - returned == 0 {
            outstanding[handle] = nil
        } else {
            outstanding[handle] = pending - returned
        }
    }

    /// A disconnection flushes the handle's packets: every one of them is a credit again.
    mutating func disconnected(handle: UInt16) {
        complete(handle: handle, count: outstanding[handle, default: 0])
    }

    func outstanding(handle: UInt16) -> Int { outstanding[handle, default: 0] }
}
