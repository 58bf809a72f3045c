import BluetoothCore
import Glibc
import Synchronization
import Testing

/// Work a reader thread puts off runs when it has handled its chunk, in order; anywhere
/// else it runs at once.
@Suite struct ReaderChunkTests {
    /// Runs `body` on a thread of its own and waits for it.
    func onThread(_ body: @escaping @Sendable () -> Void) throws {
        let thread = try PosixThread.start(body).get()
        pthread_join(thread, nil)
    }

    @Test func putOffWorkRunsAtTheEndOfTheChunkInOrder() throws {
        let log = Mutex<[String]>([])
        try onThread {
            ReaderChunk.begin()
            ReaderChunk.atEnd { log.withLock { $0.append("first") } }
            log.withLock { $0.append("handling") }
            ReaderChunk.atEnd { log.withLock { $0.append("second") } }
            log.withLock { $0.append("handled") }
            ReaderChunk.end()
            // Between chunks nothing waits.
            ReaderChunk.atEnd { log.withLock { $0.append("between") } }
            log.withLock { $0.append("after") }
        }
        #expect(log.withLock { $0 } == ["handling", "handled", "first", "second", "between", "after"])
    }

    @Test func anotherThreadOrNoChunkRunsAtOnce() throws {
        let ran = Mutex(0)
        try onThread {
            ReaderChunk.atEnd { ran.withLock { $0 += 1 } }
            precondition(ran.withLock { $0 } == 1)
        }
        // This thread never began a chunk.
        ReaderChunk.atEnd { ran.withLock { $0 += 1 } }
        #expect(ran.withLock { $0 } == 2)
    }

    @Test func workPutOffWhileEndingRunsAtOnce() throws {
        let log = Mutex<[String]>([])
        try onThread {
            ReaderChunk.begin()
            ReaderChunk.atEnd {
                log.withLock { $0.append("outer") }
                ReaderChunk.atEnd { log.withLock { $0.append("inner") } }
            }
            ReaderChunk.end()
            ReaderChunk.begin()
            ReaderChunk.atEnd { log.withLock { $0.append("next chunk") } }
            ReaderChunk.end()
        }
        #expect(log.withLock { $0 } == ["outer", "inner", "next chunk"])
    }
}
