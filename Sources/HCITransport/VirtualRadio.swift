import BluetoothCore
import Glibc

/// The project's virtual radio (tools/virtual-radio/bareble_radio.py: Bumble's software
/// controller plus demo peers), run as a child process.
///
/// Its first stdout line is `{"event": "ready", "tcp": PORT, "pty": "/dev/pts/N"}`; later
/// lines are JSON events, read with ``nextLine(timeout:)``. Control lines go to its stdin
/// with ``send(controlLine:)``. It exits when its stdin closes, so it cannot outlive us.
/// Its stderr is copied to ours as it comes, and the tail is kept to explain a failed start.
public final class VirtualRadio: Sendable {
    public let tcpPort: Int
    public let ptyPath: String?
    public let processID: pid_t
    /// The ready line's fields, for anything beyond the port and pty.
    public let readyLine: String

    private let control: Int32
    private let lines: LineChannel
    private let reader: pthread_t
    private let stopped = Lock(false)

    private init(
        tcpPort: Int, ptyPath: String?, processID: pid_t, readyLine: String, control: Int32, lines: LineChannel,
        reader: pthread_t
    ) {
        self.tcpPort = tcpPort
        self.ptyPath = ptyPath
        self.processID = processID
        self.readyLine = readyLine
        self.control = control
        self.lines = lines
        self.reader = reader
    }

    deinit { stop() }

    /// The flags of the `virtual` transport: H4 over TCP, with a peripheral and an
    /// advertiser to find.
    public static let defaultArguments = ["--tcp", "--peripheral", "--advertiser"]

    /// Starts the radio and waits for its ready line, at most `readyTimeout`. Python and
    /// Bumble start in about a second on an idle machine and took 8-9 s within the full
    /// test suite on 2 cores (once over 15 s, the old bound): the bound is for a radio that
    /// hangs, so it is far above any working start.
    /// - Parameters:
    ///   - script: the radio script; found by ``findScript()`` when nil.
    ///   - python: the interpreter; found by ``findPython(script:)`` when nil.
    public static func launch(
        arguments: [String] = defaultArguments, script: String? = nil, python: String? = nil,
        readyTimeout: Duration = .seconds(60)
    ) throws(TransportError) -> VirtualRadio {
        let script = if let script { script } else { try findScript() }
        let python = python ?? findPython(script: script)
        let child = try RadioProcess.spawn(python: python, arguments: [script] + arguments)
        let lines = LineChannel()
        let tail = StderrTail()
        let reader: pthread_t
        switch PosixThread.start({ RadioProcess.pump(stdout: child.stdout, stderr: child.stderr, lines: lines, tail: tail) }) {
        case let .success(thread): reader = thread
        case let .failure(error):
            RadioProcess.terminate(child.pid, control: child.control, lines: lines)
            throw .radioFailed(detail: "cannot start a thread: \(Posix.message(error.code))")
        }
        func fail(_ error: TransportError) -> TransportError {
            RadioProcess.terminate(child.pid, control: child.control, lines: lines)
            pthread_join(reader, nil)
            return error
        }
        let deadline = MonotonicClock.nanoseconds() &+ MonotonicClock.nanoseconds(in: readyTimeout)
        switch lines.next(until: deadline) {
        case let .line(line):
            guard let fields = try? JSONValue(parsing: line), fields["event"]?.stringValue == "ready",
                let port = fields["tcp"]?.intValue ?? (fields["tcp"] == nil ? 0 : nil)
            else {
                throw fail(.radioFailed(detail: "its first line is not the ready line: \(line)"))
            }
            return VirtualRadio(
                tcpPort: port, ptyPath: fields["pty"]?.stringValue, processID: child.pid, readyLine: line,
                control: child.control, lines: lines, reader: reader)
        case .ended:
            let status = RadioProcess.reap(child.pid)
            let text = tail.text
            if text.contains("No module named 'bumble'") || text.contains("No module named \"bumble\"") {
                throw fail(.radioNeedsBumble(python: python))
            }
            let lastLine = text.split(separator: "\n").last.map(String.init) ?? "no output"
            throw fail(.radioFailed(detail: "\(python) \(script) exited (\(status)) before it was ready: \(lastLine)"))
        case .timedOut:
            throw fail(.timedOut(spec: "virtual", waitingFor: "the virtual radio's ready line", after: readyTimeout))
        }
    }

    /// Sends one control line (`hardware-error 0x01`, `garbage 00FF`) to the radio.
    public func send(controlLine: String) throws(TransportError) {
        var line = controlLine
        if !line.hasSuffix("\n") { line += "\n" }
        let bytes = Array(line.utf8)
        let deadline = MonotonicClock.nanoseconds() &+ 2_000_000_000
        // Under the stop lock, so a stopped radio's descriptor (maybe reused) is never written.
        let written = stopped.withLock { stopped in
            !stopped && bytes.withUnsafeBytes { raw in
            do throws(Posix.WriteFailure) {
                try Posix.writeAll(control, raw, until: deadline, to: .socket)
                return true
            } catch {
                return false
            }
            }
        }
        guard written else { throw .radioFailed(detail: "it no longer takes control lines (it has exited)") }
    }

    /// The next line the radio printed after its ready line (a JSON event), waiting at
    /// most `timeout`. Throws when the radio has exited or the deadline passes.
    public func nextLine(timeout: Duration = .seconds(5)) throws(TransportError) -> String {
        switch lines.next(until: MonotonicClock.nanoseconds() &+ MonotonicClock.nanoseconds(in: timeout)) {
        case let .line(line): return line
        case .ended: throw .radioFailed(detail: "it exited")
        case .timedOut: throw .timedOut(spec: "virtual", waitingFor: "a line from the virtual radio", after: timeout)
        }
    }

    /// Closes its stdin (it exits by itself), then SIGTERM after a grace period, then
    /// SIGKILL; reaps it. Idempotent.
    public func stop() {
        let already = stopped.withLock { stopped in
            defer { stopped = true }
            return stopped
        }
        guard !already else { return }
        RadioProcess.terminate(processID, control: control, lines: lines)
        pthread_join(reader, nil)
    }

    /// `virtual`: launches the radio and connects to its TCP port; closing the transport
    /// stops the radio.
    public static func openTransport(arguments: [String] = defaultArguments, wait: ReaderWait = .blocking) throws(TransportError) -> DescriptorTransport {
        let radio = try launch(arguments: arguments)
        do throws(TransportError) {
            return try TCPTransport.connect(host: "127.0.0.1", port: radio.tcpPort, wait: wait, cleanup: { radio.stop() })
        } catch {
            radio.stop()
            throw error
        }
    }

    // MARK: - Finding the script and Python

    static let scriptRelativePath = "tools/virtual-radio/bareble_radio.py"

    /// `BAREBLE_RADIO_SCRIPT`; else tools/virtual-radio/bareble_radio.py in the current
    /// directory or a parent of it, or in the executable's directory or a parent of it.
    public static func findScript() throws(TransportError) -> String {
        if let path = environment("BAREBLE_RADIO_SCRIPT") { return path }
        var starts: [String] = []
        if let cwd = currentDirectory() { starts.append(cwd) }
        if let executable = ErrorContext.executablePath() { starts.append(parent(executable)) }
        for start in starts {
            var directory = start
            while true {
                let candidate = directory + "/" + scriptRelativePath
                if access(candidate, R_OK) == 0 { return candidate }
                let up = parent(directory)
                if up == directory { break }
                directory = up
            }
        }
        throw .radioScriptNotFound(searched: starts)
    }

    /// `BAREBLE_PYTHON`; else the checkout's .venv/bin/python3 (beside tools/); else
    /// `python3` from PATH.
    public static func findPython(script: String) -> String {
        if let python = environment("BAREBLE_PYTHON") { return python }
        // script = <repo>/tools/virtual-radio/bareble_radio.py
        let repository = parent(parent(parent(script)))
        let venv = repository + "/.venv/bin/python3"
        if access(venv, X_OK) == 0 { return venv }
        return "python3"
    }

    private static func environment(_ name: String) -> String? {
        guard let value = getenv(name) else { return nil }
        let text = String(cString: value)
        return text.isEmpty ? nil : text
    }

    private static func currentDirectory() -> String? {
        var buffer = [CChar](repeating: 0, count: 4096)
        guard getcwd(&buffer, buffer.count) != nil else { return nil }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    static func parent(_ path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }
}

/// The last few kilobytes of the radio's stderr.
final class StderrTail: Sendable {
    private let bytes = Lock<[UInt8]>([])
    private static let limit = 8192

    func append(_ chunk: UnsafeBufferPointer<UInt8>) {
        bytes.withLock { bytes in
            bytes.append(contentsOf: chunk)
            if bytes.count > Self.limit { bytes.removeFirst(bytes.count - Self.limit) }
        }
    }

    var text: String { bytes.withLock { String(decoding: $0, as: UTF8.self) } }
}
