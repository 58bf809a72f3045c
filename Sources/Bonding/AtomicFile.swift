import BluetoothCore
import Glibc

/// The file operations of the bond store, straight on the system calls so that each step
/// that matters for crash safety (fsync of the data, rename, fsync of the directory) is
/// visible and none is skipped by a buffering layer.
enum AtomicFile {
    /// Bond files are a few kilobytes; anything far larger is not ours and is not read
    /// into memory whole.
    static let maximumSize = 16 << 20

    /// Creates `path` and missing parents with mode 0700; an existing directory is left
    /// with the mode it has.
    static func makeDirectory(_ path: String) throws(BondStoreError) {
        var prefix = path.hasPrefix("/") ? "" : "."
        for component in path.split(separator: "/") {
            let parent = prefix.isEmpty ? "/" : prefix
            prefix += "/" + component
            if mkdir(prefix, 0o700) != 0 {
                let code = errno
                guard code == EEXIST else { throw .system(operation: "create the directory", path: prefix, errno: code) }
            } else {
                // A new directory's entry is in its parent: flushed, so a power cut after
                // the first bond was written cannot take the directory, bonds and all.
                try syncDirectory(parent)
            }
        }
        var status = stat()
        guard stat(path, &status) == 0 else { throw .system(operation: "look at", path: path, errno: errno) }
        guard status.st_mode & S_IFMT == S_IFDIR else { throw .system(operation: "use the directory", path: path, errno: ENOTDIR) }
    }

    /// The whole file, or nil when it does not exist.
    static func read(_ path: String) throws(BondStoreError) -> [UInt8]? {
        try readStamped(path)?.bytes
    }

    /// The whole file and the stamp of what was read, or nil when it does not exist.
    static func readStamped(_ path: String) throws(BondStoreError) -> (bytes: [UInt8], stamp: FileStamp)? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        if fd < 0 {
            let code = errno
            if code == ENOENT { return nil }
            throw .system(operation: "open", path: path, errno: code)
        }
        defer { close(fd) }
        var status = stat()
        guard fstat(fd, &status) == 0 else { throw .system(operation: "look at", path: path, errno: errno) }
        guard status.st_size <= maximumSize else {
            throw .corrupt(path: path, reason: "\(status.st_size) bytes, far more than any bond file")
        }
        let stamp = FileStamp(status)
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if count == 0 { return (bytes, stamp) }
            if count < 0 {
                let code = errno
                if code == EINTR { continue }
                throw .system(operation: "read", path: path, errno: code)
            }
            bytes += chunk[0..<count]
            guard bytes.count <= maximumSize else { throw .corrupt(path: path, reason: "grew beyond any bond file while read") }
        }
    }

    /// The stamp of the file at `path` now; nil when there is none (or it cannot be looked
    /// at, which reading it would then report).
    static func stamp(_ path: String) -> FileStamp? {
        var status = stat()
        return stat(path, &status) == 0 ? FileStamp(status) : nil
    }

    /// Replaces `path` with `bytes` so that at every instant the path names either the old
    /// file or the complete new one: write a temporary file in the same directory (same
    /// file system, so rename is atomic), fsync it, rename it over `path`, fsync the
    /// directory so the rename itself survives a power cut. The file gets mode 0600.
    /// The caller holds the directory lock, so a temporary file already there is what a
    /// killed writer left behind, never a file in use: it is removed first.
    static func replace(_ path: String, in directory: String, with bytes: [UInt8], temporaryName: String) throws(BondStoreError) {
        let temporary = directory + "/" + temporaryName
        discard(temporary)
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw .system(operation: "create", path: temporary, errno: errno) }
        var failure: BondStoreError?
        // The umask can only remove bits, but a file created by an older version, or a
        // directory with default ACLs, could widen them: set the mode explicitly.
        if fchmod(fd, 0o600) != 0 { failure = .system(operation: "set mode 0600 on", path: temporary, errno: errno) }
        if failure == nil { failure = writeAll(fd, bytes, path: temporary) }
        if failure == nil, fsync(fd) != 0 { failure = .system(operation: "flush (fsync)", path: temporary, errno: errno) }
        if close(fd) != 0, failure == nil { failure = .system(operation: "close", path: temporary, errno: errno) }
        if failure == nil, rename(temporary, path) != 0 { failure = .system(operation: "rename over", path: path, errno: errno) }
        if let failure {
            unlink(temporary)
            throw failure
        }
        try syncDirectory(directory)
    }

    /// Removes `path` (a bond file); the directory is fsynced so the removal survives.
    static func remove(_ path: String, in directory: String) throws(BondStoreError) {
        guard unlink(path) == 0 || errno == ENOENT else { throw .system(operation: "remove", path: path, errno: errno) }
        try syncDirectory(directory)
    }

    /// Removes `path` if it is there; for leftovers whose absence is all that matters.
    static func discard(_ path: String) { _ = unlink(path) }

    static func syncDirectory(_ directory: String) throws(BondStoreError) {
        let fd = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw .system(operation: "open", path: directory, errno: errno) }
        defer { close(fd) }
        guard fsync(fd) == 0 else { throw .system(operation: "flush (fsync)", path: directory, errno: errno) }
    }

    private static func writeAll(_ fd: Int32, _ bytes: [UInt8], path: String) -> BondStoreError? {
        bytes.withUnsafeBytes { buffer -> BondStoreError? in
            var offset = 0
            while offset < buffer.count {
                let written = write(fd, buffer.baseAddress! + offset, buffer.count - offset)
                if written > 0 {
                    offset += written
                } else if written < 0 && errno == EINTR {
                    continue
                } else {
                    return .system(operation: "write", path: path, errno: written < 0 ? errno : EIO)
                }
            }
            return nil
        }
    }

    /// The names in `directory` (without "." and ".."); empty when it does not exist.
    static func names(in directory: String) throws(BondStoreError) -> [String] {
        guard let handle = opendir(directory) else {
            let code = errno
            if code == ENOENT { return [] }
            throw .system(operation: "list", path: directory, errno: code)
        }
        defer { closedir(handle) }
        var names: [String] = []
        while let entry = readdir(handle) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names.sorted()
    }
}

/// Which version of a file was read: every ``AtomicFile/replace(_:in:with:temporaryName:)``
/// renames a new file (a new inode, with its own size and times) over the path, so a
/// different stamp means another write. Two writes could only look alike if the second
/// reused the inode freed by the first, with the same size, within one tick of the file
/// system's clock; a later write tells them apart again.
struct FileStamp: Equatable, Sendable {
    private let device: UInt64
    private let inode: UInt64
    private let size: Int64
    /// Modification and status change times.
    private let modifiedSeconds: Int64
    private let modifiedNanoseconds: Int64
    private let changedSeconds: Int64
    private let changedNanoseconds: Int64

    init(_ status: stat) {
        device = UInt64(status.st_dev)
        inode = UInt64(status.st_ino)
        size = Int64(status.st_size)
        modifiedSeconds = Int64(status.st_mtim.tv_sec)
        modifiedNanoseconds = Int64(status.st_mtim.tv_nsec)
        changedSeconds = Int64(status.st_ctim.tv_sec)
        changedNanoseconds = Int64(status.st_ctim.tv_nsec)
    }
}

/// An exclusive advisory lock (flock) on the bond directory for one read-modify-write, so
/// two processes adding bonds at once cannot lose one another's update. The kernel drops
/// it when the process dies, kill -9 included.
///
/// The threads of this process queue for it in-process first (one mutex per directory,
/// known by device and inode, so two spellings of one path share it), in the order the
/// mutex gives; only the thread at the front asks the kernel, polling (a non-blocking
/// flock, 1 ms doubling to 50 ms) until `timeout` from the call, and always at least once.
/// Polling alone starved threads of one process under ordinary contention (200 saves at
/// once, one past 5 s), since it loses the kernel's queue of waiters; with the queue a
/// thread behind others finds the lock free when its turn comes, however late.
struct DirectoryLock: ~Copyable {
    private let fd: Int32
    private let queue: ProcessQueue

    init(_ directory: String, timeout: Duration) throws(BondStoreError) {
        // From the call: a thread that queued behind one which waited out another process's
        // holder tries the kernel once and fails too, instead of waiting a whole timeout of
        // its own (k threads would otherwise wait k timeouts).
        let deadline = MonotonicClock.nanoseconds() &+ MonotonicClock.nanoseconds(in: timeout)
        var status = stat()
        guard stat(directory, &status) == 0 else { throw .system(operation: "open", path: directory, errno: errno) }
        let queue = ProcessQueue.of(device: UInt64(status.st_dev), inode: UInt64(status.st_ino))
        queue.enter()
        let fd = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else {
            let code = errno
            queue.leave()
            throw .system(operation: "open", path: directory, errno: code)
        }
        var pause: UInt32 = 1_000
        while flock(fd, LOCK_EX | LOCK_NB) != 0 {
            let code = errno
            if code == EINTR { continue }
            let failure: BondStoreError? = if code != EWOULDBLOCK {
                .system(operation: "lock", path: directory, errno: code)
            } else if MonotonicClock.nanoseconds() >= deadline {
                .lockTimedOut(directory: directory, after: timeout)
            } else {
                nil
            }
            if let failure {
                close(fd)
                queue.leave()
                throw failure
            }
            usleep(pause)
            pause = min(pause * 2, 50_000)
        }
        self.fd = fd
        self.queue = queue
    }

    deinit {
        close(fd)
        queue.leave()
    }

    /// The in-process queue of one directory: a mutex held from `enter` to `leave`, by
    /// whichever thread entered (a pthread mutex: ThreadSanitizer sees it).
    private final class ProcessQueue: @unchecked Sendable {
        private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
        private static let all = Lock<[String: ProcessQueue]>([:])

        private init() { pthread_mutex_init(mutex, nil) }

        /// One per directory for the life of the process (a handful of directories at most).
        static func of(device: UInt64, inode: UInt64) -> ProcessQueue {
            all.withLock { all in
                let key = "\(device):\(inode)"
                if let queue = all[key] { return queue }
                let queue = ProcessQueue()
                all[key] = queue
                return queue
            }
        }

        func enter() { pthread_mutex_lock(mutex) }
        func leave() { pthread_mutex_unlock(mutex) }
    }
}
