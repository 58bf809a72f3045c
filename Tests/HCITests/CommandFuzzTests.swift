import BluetoothCore
import HCI
import Testing
import TestSupport

// Seeded random input for every parameter decoder and every return-parameters decoder.
// Property: decoding never traps, fails only with a DecodeError (typed throws makes that a
// compile-time fact), and whatever it accepts re-encodes to exactly the input bytes.

/// Every decoder in the catalogue, each with the sample encodings as seeds.
let allDecoders: [Decoder] = {
    var decoders: [Decoder] = []
    var seenReturnTypes: Set<ObjectIdentifier> = []
    func add<C: HCICommand>(_ type: C.Type) {
        let seeds = Samples.commands.filter { $0.type.opcode == C.opcode }.map(\.parameters)
        decoders.append(.parameters(of: C.self, seeds: seeds))
        let returnType = ObjectIdentifier(C.ReturnParameters.self)
        guard seenReturnTypes.insert(returnType).inserted else { return }
        let returnSeeds = Samples.returns.filter { ObjectIdentifier($0.returnType) == returnType }.map(\.bytes)
        decoders.append(.returnParameters(of: C.ReturnParameters.self, name: C.name, seeds: returnSeeds))
    }
    for type in HCICommands.all { add(type) }
    return decoders
}()

@Suite struct CommandFuzzTests {
    static let inputsPerDecoder = 100_000

    @Test func everyDecoderIsFuzzed() {
        // One parameter decoder per command plus each distinct return-parameters type.
        #expect(allDecoders.count > HCICommands.all.count)
        for decoder in allDecoders { #expect(!decoder.seeds.isEmpty, "\(decoder.name) has no seed") }
    }

    @Test(arguments: allDecoders)
    func randomInputDecodesCanonicallyOrFails(_ decoder: Decoder) async {
        await cpuBound {
            var random = SeededRandom(seed: Self.seed(for: decoder.name))
            var accepted = 0
            var input: [UInt8] = []
            input.reserveCapacity(300)
            for iteration in 0..<Self.inputsPerDecoder {
                await yieldPeriodically(iteration: iteration)
                Self.nextInput(&input, seeds: decoder.seeds, random: &random)
                let output: [UInt8]
                do { output = try decoder.decodeAndReencode(input) } catch { continue }
                accepted += 1
                if output != input {
                    Issue.record("\(decoder.name): \(Hex.string(input, separator: " ")) re-encoded as \(Hex.string(output, separator: " "))")
                    return
                }
            }
            // The seeds themselves come up now and then, so something must have decoded.
            #expect(accepted > 0)
        }
    }

    /// A stable seed per decoder, so a failure replays on its own.
    static func seed(for name: String) -> UInt64 {
        name.utf8.reduce(0xCBF2_9CE4_8422_2325) { ($0 ^ UInt64($1)) &* 0x100_0000_01B3 }
    }

    /// One input, favouring the valid lengths: random bytes of a seed's length, a seed with
    /// a few octets changed (which keeps length fields and PHY masks plausible), a seed cut
    /// or extended, or random bytes of a random small length.
    static func nextInput(_ input: inout [UInt8], seeds: [[UInt8]], random: inout SeededRandom) {
        let seed = seeds[Int(random.next() % UInt64(seeds.count))]
        let choice = random.next() % 8
        input.removeAll(keepingCapacity: true)
        switch choice {
        case 0, 1:
            appendRandom(&input, count: seed.count, random: &random)
        case 2, 3, 4:
            input.append(contentsOf: seed)
            if !input.isEmpty {
                for _ in 0..<(1 + random.next() % 3) {
                    let value = random.next()
                    input[Int(value % UInt64(input.count))] = UInt8(truncatingIfNeeded: value >> 32)
                }
            }
        case 5:
            let cut = Int(random.next() % UInt64(seed.count + 1))
            input.append(contentsOf: seed.prefix(cut))
            appendRandom(&input, count: Int(random.next() % 3), random: &random)
        default:
            appendRandom(&input, count: Int(random.next() % 41), random: &random)
        }
    }

    /// Eight bytes per generator step; `SeededRandom.bytes` spends a step per byte, which
    /// dominates a debug-build loop of millions of inputs.
    static func appendRandom(_ input: inout [UInt8], count: Int, random: inout SeededRandom) {
        var remaining = count
        while remaining > 0 {
            var word = random.next()
            for _ in 0..<min(8, remaining) {
                input.append(UInt8(truncatingIfNeeded: word))
                word >>= 8
            }
            remaining -= min(8, remaining)
        }
    }
}
