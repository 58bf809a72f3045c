import BluetoothCore
import Bonding
import Foundation
import HCITransport
import SMP
import Testing
import TestSupport

/// kill -9 in the middle of bond writes: `bond-store-writer` rewrites one bond file in a
/// loop, alternating two bond sets; it is killed at seeded random moments, and after each
/// kill the file must parse and hold exactly one of the two sets.
@Suite(.serialized) struct BondStoreCrashTests {
    typealias F = BondFixtures

    static var writer: String { builtExecutable(named: "bond-store-writer") }

    @Test func killNineDuringWritesLeavesTheOldOrTheNewSet() async throws {
        let outcome = try await onOwnThread { try Self.killRepeatedly(times: 200, seed: 0x00C4_A511) }
        // The writer got to write (it writes B first over the initial A) and some kills
        // landed inside a write (its temporary file was left behind). How many depends on
        // the machine's load, so only their existence is asserted.
        #expect(outcome.setB >= 1, "A \(outcome.setA), B \(outcome.setB)")
        #expect(outcome.leftoverTemporaryFiles >= 1)
        #expect(outcome.setA + outcome.setB == outcome.rounds)
    }

    struct Outcome: Sendable {
        var rounds = 0
        var setA = 0
        var setB = 0
        var leftoverTemporaryFiles = 0
    }

    /// `times` kills, then (while no write has completed or no kill has landed inside one,
    /// as on a machine so loaded, or a build so slow to start, that the writer rarely gets
    /// going within 40 ms) up to `extra` more with longer delays.
    static func killRepeatedly(times: Int, extra: Int = 300, seed: UInt64) throws -> Outcome {
        let directory = F.directory()
        let store = try BondStore(directory: directory, identity: .public(F.localPublic))
        // Two sets that differ in size, peers and every key.
        let setA = (1...3).map { F.bond($0) }
        let setB = (10...17).map { F.bond($0, secureConnections: false) }
        try store.update { $0 = setA }
        let fileA = directory + "/set-a", fileB = directory + "/set-b"
        try F.write(BondFileFormat.encode(StoredBonds(local: store.local, bonds: setA)), to: fileA)
        try F.write(BondFileFormat.encode(StoredBonds(local: store.local, bonds: setB)), to: fileB)

        var random = SeededRandom(seed: seed)
        var outcome = Outcome()
        for round in 0..<(times + extra) {
            if round >= times, outcome.leftoverTemporaryFiles > 0, outcome.setB > 0 { break }
            outcome.rounds += 1
            let pid = try ChildProcess.spawn([writer, directory, fileA, fileB])
            // 2 ... 40 ms: process start-up takes a few, each write well under one; the
            // extra rounds wait up to 400 ms.
            let delay = 2_000 + Int(random.next() % (round < times ? 38_000 : 398_000))
            usleep(UInt32(delay))
            kill(pid, SIGKILL)
            var status: Int32 = 0
            waitpid(pid, &status, 0)
            // Killed by the signal, not dead of its own error.
            let signalled = status & 0x7F == SIGKILL
            #expect(signalled, "round \(round): the writer ended with status \(status) before the kill")

            let bytes = try F.bytes(store.path)
            let stored = try BondFileFormat.decode(bytes, path: store.path)
            if stored.bonds == setA {
                outcome.setA += 1
            } else if stored.bonds == setB {
                outcome.setB += 1
            } else {
                Issue.record("round \(round): the file holds neither set (\(stored.bonds.count) bonds)")
            }
            if FileManager.default.fileExists(atPath: directory + "/.F00D00000001.public.json.tmp") { outcome.leftoverTemporaryFiles += 1 }
        }
        // The store cleans a killed writer's temporary file at its next write.
        try store.update { $0 = setA }
        #expect(!FileManager.default.fileExists(atPath: directory + "/.F00D00000001.public.json.tmp"))
        print("bond-store-writer killed \(outcome.rounds) times: set A \(outcome.setA), set B \(outcome.setB), temporary file left behind \(outcome.leftoverTemporaryFiles) times")
        return outcome
    }
}
