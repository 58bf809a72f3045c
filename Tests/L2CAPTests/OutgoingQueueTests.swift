import BluetoothCore
import HCI
@testable import L2CAP
import TestSupport
import Testing

/// One connection's queue for the controller, against a plain array kept beside it: order,
/// the counts its bound is decided by, and what stays allocated once the head has moved on.
@Suite struct OutgoingQueueTests {
    /// A PDU of `fragments` one-octet fragments.
    static func pdu(_ id: UInt64, origin: OutgoingOrigin = .host, fragments: Int = 1, completion: OutgoingPDU.Completion? = nil) -> OutgoingPDU {
        OutgoingPDU(
            id: id, frame: [UInt8](repeating: UInt8(truncatingIfNeeded: id), count: fragments), connectionHandle: 0x40,
            fragmentLength: 1, origin: origin, payloadBytes: Int(id % 7) + 1, completion: completion)
    }

    /// A burst's pattern (fill to 256, then one out per one in, then drain), with answers
    /// mixed in: the queue gives the PDUs back in order, its counts match the model's, and
    /// its array never holds as many taken slots as queued PDUs.
    @Test func takesFromTheFrontInOrderWithBoundedStorage() {
        var queue = OutgoingQueue()
        var model: [OutgoingPDU] = []
        var nextID: UInt64 = 0
        func add() {
            let pdu = Self.pdu(nextID, origin: nextID % 5 == 0 ? .answer : .host)
            nextID += 1
            queue.append(pdu)
            model.append(pdu)
        }
        func take() {
            #expect(queue.removeFirst()?.id == model.removeFirst().id)
        }
        func check() {
            #expect(queue.count == model.count)
            #expect(queue.first?.id == model.first?.id)
            #expect(queue.hostPDUs == model.count { $0.origin == .host })
            #expect(queue.answers == model.count { $0.origin == .answer })
            #expect(queue.hostBytes == model.filter { $0.origin == .host }.reduce(0) { $0 + $1.payloadBytes })
            #expect(queue.storedSlots <= 2 * queue.count, "taken slots are dropped once they are half the array")
        }
        for _ in 0..<256 { add() }
        check()
        for step in 0..<10_000 {
            take()
            add()
            if step % 97 == 0 { check() }
        }
        while !model.isEmpty {
            take()
            check()
        }
        #expect(queue.removeFirst() == nil)
        #expect(queue.storedSlots == 0)
    }

    /// Fragments are handed in order across PDUs; a PDU leaves only when taken, and the
    /// completions owed are those of the PDUs still queued, oldest first.
    @Test func fragmentsAndCompletionsFollowTheHead() {
        let completed = Lock<[UInt64]>([])
        var queue = OutgoingQueue()
        for id: UInt64 in 1...3 {
            queue.append(Self.pdu(id, fragments: 2) { _ in completed.withLock { $0.append(id) } })
        }
        #expect(queue.takeNextFragment()?.pduID == 1)
        #expect(queue.takeNextFragment()?.pduID == 1)
        #expect(queue.takeNextFragment()?.pduID == 2)
        #expect(queue.hasUnsentFragments)
        queue.removeFirst()?.completion?(.success(()))
        #expect(completed.withLock { $0 } == [1])
        #expect(queue.takeNextFragment()?.pduID == 2)
        #expect(queue.takeNextFragment()?.pduID == 3)
        #expect(queue.takeNextFragment()?.pduID == 3)
        #expect(queue.takeNextFragment() == nil)
        #expect(!queue.hasUnsentFragments)
        for completion in queue.removeAll() { completion(.failure(.controllerNotReady)) }
        #expect(completed.withLock { $0 } == [1, 2, 3])
        #expect(queue.count == 0 && queue.storedSlots == 0)
    }

    /// Fragments handed and PDUs taken as L2CAP's pump does (the head leaves only once all
    /// its fragments are handed), in a seeded random order over compactions: the queue
    /// hands the same fragment as a scan of a plain array for the first PDU with one left.
    @Test func handsFragmentsAsAScanWouldAcrossCompactions() {
        var queue = OutgoingQueue()
        var model: [(id: UInt64, fragments: Int, handed: Int)] = []
        var random = SeededRandom(seed: 0x0F0E)
        var nextID: UInt64 = 0
        for _ in 0..<20_000 {
            switch random.next() % 3 {
            case 0 where model.count < 300:
                let fragments = Int(random.next() % 3) + 1
                queue.append(Self.pdu(nextID, fragments: fragments))
                model.append((nextID, fragments, 0))
                nextID += 1
            case 1:
                let index = model.firstIndex { $0.handed < $0.fragments }
                let taken = queue.takeNextFragment()
                #expect(taken?.pduID == index.map { model[$0].id })
                if let index { model[index].handed += 1 }
            default:
                guard let first = model.first else { continue }
                let handed = first.handed == first.fragments
                #expect(queue.removeFirst(ifHanded: first.id)?.id == (handed ? first.id : nil))
                if handed { model.removeFirst() }
            }
            #expect(queue.hasUnsentFragments == model.contains { $0.handed < $0.fragments })
            #expect(queue.count == model.count)
        }
    }
}
