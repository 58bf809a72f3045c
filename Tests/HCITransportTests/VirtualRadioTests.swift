import BluetoothCore
import Glibc
import Testing
import TestSupport
@testable import HCITransport

@Suite(.serialized) struct VirtualRadioTests {
    /// Writes a fake radio script and returns its path.
    private func script(_ name: String, _ body: String) -> String {
        let path = temporaryPath(name)
        let file = fopen(path, "w")
        fputs(body, file)
        fclose(file)
        return path
    }

    /// Prints the ready line, then acknowledges every control line; exits when stdin closes.
    static let echo = """
        import json, sys
        print(json.dumps({"event": "ready", "tcp": 4321, "pty": "/dev/pts/99", "args": " ".join(sys.argv[1:])}))
        for line in sys.stdin:
            print(json.dumps({"event": "ack", "line": line.strip()}))

        """

    private func isAlive(_ pid: pid_t) -> Bool { kill(pid, 0) == 0 }

    @Test func readyLineControlEchoAndStop() throws {
        let path = script("echo.py", Self.echo)
        defer { unlink(path) }
        let radio = try VirtualRadio.launch(arguments: ["--tcp", "--pty"], script: path, python: "python3")
        #expect(radio.tcpPort == 4321)
        #expect(radio.ptyPath == "/dev/pts/99")
        #expect((try? JSONValue(parsing: radio.readyLine))?["args"]?.stringValue == "--tcp --pty")
        try radio.send(controlLine: "garbage 00FF 1")
        #expect(try radio.nextLine() == #"{"event": "ack", "line": "garbage 00FF 1"}"#)
        try radio.send(controlLine: "hardware-error 0x01\n")
        #expect(try radio.nextLine().contains("hardware-error 0x01"))
        #expect(isAlive(radio.processID))
        radio.stop()
        #expect(!isAlive(radio.processID))  // reaped, so the pid is gone
        radio.stop()
        #expect(throws: TransportError.self) { try radio.send(controlLine: "late") }
        #expect(throws: TransportError.self) { try radio.nextLine(timeout: .milliseconds(10)) }
    }

    @Test func nextLineHasADeadline() throws {
        let path = script("quiet.py", Self.echo)
        defer { unlink(path) }
        let radio = try VirtualRadio.launch(script: path, python: "python3")
        defer { radio.stop() }
        #expect(throws: TransportError.timedOut(spec: "virtual", waitingFor: "a line from the virtual radio", after: .milliseconds(50))) {
            try radio.nextLine(timeout: .milliseconds(50))
        }
    }

    /// A radio that ignores its stdin closing is terminated after the grace period.
    @Test func stopTerminatesAStubbornRadio() async throws {
        let path = script("stubborn.py", """
            import json, time
            print(json.dumps({"event": "ready", "tcp": 1}))
            time.sleep(60)

            """)
        defer { unlink(path) }
        // stop() blocks through the grace period (seconds): not on the cooperative pool.
        let processID = try await onOwnThread {
            let radio = try VirtualRadio.launch(script: path, python: "python3")
            radio.stop()
            return radio.processID
        }
        #expect(!isAlive(processID))
    }

    @Test func missingBumbleSaysToRunSetup() {
        let path = script("nobumble.py", "import bumble_is_not_installed_here as bumble\n")
        let fake = script("nobumble2.py", """
            import sys
            sys.stderr.write("ModuleNotFoundError: No module named 'bumble'\\n")
            sys.exit(1)

            """)
        defer { unlink(path); unlink(fake) }
        #expect(throws: TransportError.radioNeedsBumble(python: "python3")) {
            try VirtualRadio.launch(script: fake, python: "python3")
        }
        #expect {
            try VirtualRadio.launch(script: path, python: "python3")
        } throws: { error in
            guard case let .radioFailed(detail) = error as? TransportError else { return false }
            return detail.contains("exited (status 1) before it was ready")
        }
    }

    @Test func badReadyLineAndTimeout() async throws {
        let bad = script("bad.py", "print('hello')\nimport time; time.sleep(60)\n")
        let slow = script("slow.py", "import time; time.sleep(60)\n")
        defer { unlink(bad); unlink(slow) }
        // A failed launch stops the script, through the grace period (seconds): not on the
        // cooperative pool.
        let badLine = try await onOwnThread { Self.launchFailure { () throws(TransportError) in try VirtualRadio.launch(script: bad, python: "python3") } }
        #expect(badLine == .radioFailed(detail: "its first line is not the ready line: hello"))
        let noLine = try await onOwnThread {
            Self.launchFailure { () throws(TransportError) in try VirtualRadio.launch(script: slow, python: "python3", readyTimeout: .milliseconds(300)) }
        }
        #expect(noLine == .timedOut(spec: "virtual", waitingFor: "the virtual radio's ready line", after: .milliseconds(300)))
    }

    /// The error a launch failed with; nil (the radio stopped again) when it started.
    private static func launchFailure(_ launch: () throws(TransportError) -> VirtualRadio) -> TransportError? {
        do {
            try launch().stop()
            return nil
        } catch {
            return error
        }
    }

    @Test func missingPythonSaysWhatToDo() {
        let path = script("any.py", Self.echo)
        defer { unlink(path) }
        #expect {
            try VirtualRadio.launch(script: path, python: "python-that-does-not-exist")
        } throws: { error in
            (error as? TransportError)?.description.contains("set BAREBLE_PYTHON") == true
        }
    }

    @Test func findsScriptAndPython() throws {
        // The worktree has no radio yet, so point at a fake one through the environment.
        let path = script("found.py", Self.echo)
        defer { unlink(path) }
        setenv("BAREBLE_RADIO_SCRIPT", path, 1)
        defer { unsetenv("BAREBLE_RADIO_SCRIPT") }
        #expect(try VirtualRadio.findScript() == path)
        #expect(VirtualRadio.findPython(script: "/nowhere/tools/virtual-radio/bareble_radio.py") == "python3")
        #expect(VirtualRadio.parent("/a/b/c") == "/a/b")
        #expect(VirtualRadio.parent("/a") == "/")
    }
}
