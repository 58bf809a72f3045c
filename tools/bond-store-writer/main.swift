// The crash-safety test's victim: rewrites one bond file forever, alternating between two
// bond sets, until it is killed (SIGKILL, at random moments, by BondStoreCrashTests).
//
//     bond-store-writer DIR SET_A.json SET_B.json
//
// SET_A and SET_B are bond files of the same local identity; DIR already holds that
// identity's file.
import Bonding
import Glibc

func fail(_ message: String) -> Never {
    let line = Array("bond-store-writer: \(message)\n".utf8)
    _ = line.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
    exit(2)
}

func load(_ path: String) -> StoredBonds {
    guard let file = fopen(path, "rb") else { fail("cannot open \(path)") }
    defer { fclose(file) }
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 4096)
    while true {
        let count = fread(&chunk, 1, chunk.count, file)
        if count <= 0 { break }
        bytes += chunk[0..<count]
    }
    do {
        return try BondFileFormat.decode(bytes, path: path)
    } catch {
        fail(error.description)
    }
}

let arguments = CommandLine.arguments
guard arguments.count == 4 else { fail("usage: bond-store-writer DIR SET_A.json SET_B.json") }
let sets = [load(arguments[2]), load(arguments[3])]
let local = sets[0].local.address
do {
    let store = try BondStore(directory: arguments[1], identity: local.type == .public ? .public(local.address) : .randomStatic(local.address))
    // B first: the file starts as A, so a B seen after a kill proves a write completed.
    var turn = 1
    while true {
        let next = sets[turn % 2].bonds
        try store.update { $0 = next }
        turn += 1
    }
} catch {
    fail(error.description)
}
