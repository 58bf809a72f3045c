import Foundation
import Testing
import TestSupport

/// `bareble-central explore --json` against the radio's HRM peripheral, checked field by
/// field against the `gatt-database` event in which the radio describes what it defines
/// (not against our own output). A radio of its own, so no other test has written a value
/// or added a service before the event is compared.
@Suite(.serialized) struct GATTExploreTool {
    static let harness = Result { try RadioHarness(arguments: ["--tcp", "--peripheral"]) }

    @Test func exploreJSONIsTheRadiosDatabaseAndTheCaptureIsClean() async throws {
        let harness = try Self.harness.get()
        let defined = try await harness.waitForEvent("gatt-database") { $0["peer"] as? String == "peripheral" }
        let capture = RadioPeripheral.temporaryPath("explore.btsnoop")
        let result = try await RadioPeripheral.central(["explore", RadioPeripheral.address, "--json", "--no-auto-pair", "--btsnoop", capture] + RadioPeripheral.transport(harness))
        #expect(result.status == 0, "\(result.errors)")
        let explored = try #require(try JSONSerialization.jsonObject(with: Data(result.output.utf8)) as? [String: Any])

        #expect(explored["address"] as? String == RadioPeripheral.address)
        #expect(explored["addressType"] as? String == "random")
        #expect(explored["mtu"] as? Int == 517)
        #expect(explored["name"] as? String == "BareBLE-HRM")
        #expect((explored["databaseHash"] as? String)?.lowercased() == (defined["database_hash"] as? String)?.lowercased())

        let ours = try #require(explored["services"] as? [[String: Any]])
        let theirs = try #require(defined["services"] as? [[String: Any]])
        #expect(ours.count == theirs.count)
        #expect(theirs.count == 8)
        var characteristicsCompared = 0
        var descriptorsCompared = 0
        var valuesCompared = 0
        for (service, expected) in zip(ours, theirs) {
            let name = "service \(expected["uuid"] ?? "?")"
            #expect(service["handle"] as? Int == expected["handle"] as? Int, "\(name)")
            #expect(service["end"] as? Int == expected["end"] as? Int, "\(name)")
            #expect(service["uuid"] as? String == expected["uuid"] as? String, "\(name)")
            #expect(service["primary"] as? Bool == expected["primary"] as? Bool, "\(name)")
            let includes = service["includes"] as? [[String: Any]] ?? []
            let expectedIncludes = expected["includes"] as? [[String: Any]] ?? []
            #expect(includes.count == expectedIncludes.count, "\(name) includes")
            for (include, expectedInclude) in zip(includes, expectedIncludes) {
                for key in ["handle", "start", "end"] {
                    #expect(include[key] as? Int == expectedInclude[key] as? Int, "\(name) include \(key)")
                }
                #expect(include["uuid"] as? String == expectedInclude["uuid"] as? String, "\(name) include uuid")
            }
            let characteristics = service["characteristics"] as? [[String: Any]] ?? []
            let expectedCharacteristics = expected["characteristics"] as? [[String: Any]] ?? []
            #expect(characteristics.count == expectedCharacteristics.count, "\(name) characteristics")
            for (characteristic, expectedCharacteristic) in zip(characteristics, expectedCharacteristics) {
                characteristicsCompared += 1
                let uuid = expectedCharacteristic["uuid"] as? String ?? "?"
                #expect(characteristic["uuid"] as? String == uuid)
                #expect(characteristic["handle"] as? Int == expectedCharacteristic["handle"] as? Int, "\(uuid)")
                #expect(characteristic["valueHandle"] as? Int == expectedCharacteristic["value_handle"] as? Int, "\(uuid)")
                #expect(characteristic["end"] as? Int == expectedCharacteristic["end"] as? Int, "\(uuid)")
                #expect(characteristic["properties"] as? Int == expectedCharacteristic["properties"] as? Int, "\(uuid)")
                let readable = (expectedCharacteristic["property_names"] as? [String] ?? []).contains("READ")
                let permissions = expectedCharacteristic["permissions"] as? [String] ?? []
                if !readable {
                    // Not read: the explorer lists it without a value.
                    #expect(characteristic["value"] is NSNull, "\(uuid)")
                } else if permissions.contains("READ_REQUIRES_ENCRYPTION") {
                    // Unpaired (--no-auto-pair): Insufficient Authentication (0x05), as the radio documents.
                    #expect(characteristic["value"] is NSNull, "\(uuid)")
                    #expect(characteristic["errorCode"] as? Int == 0x05, "\(uuid)")
                    #expect((characteristic["error"] as? String)?.contains("pair first") == true, "\(uuid)")
                } else {
                    // Computed per read (the Database Hash) are null in the event: the hash
                    // is compared above.
                    let expectedValue = (expectedCharacteristic["value"] as? String) ?? (uuid == "2B2A" ? defined["database_hash"] as? String : nil)
                    #expect(expectedValue != nil, "\(uuid) has no value to compare")
                    #expect((characteristic["value"] as? String)?.lowercased() == expectedValue?.lowercased(), "\(uuid)")
                    valuesCompared += 1
                }
                let descriptors = characteristic["descriptors"] as? [[String: Any]] ?? []
                let expectedDescriptors = expectedCharacteristic["descriptors"] as? [[String: Any]] ?? []
                #expect(descriptors.count == expectedDescriptors.count, "\(uuid) descriptors")
                for (descriptor, expectedDescriptor) in zip(descriptors, expectedDescriptors) {
                    descriptorsCompared += 1
                    #expect(descriptor["handle"] as? Int == expectedDescriptor["handle"] as? Int, "\(uuid) descriptor")
                    #expect(descriptor["uuid"] as? String == expectedDescriptor["uuid"] as? String, "\(uuid) descriptor")
                    if let value = expectedDescriptor["value"] as? String {
                        #expect((descriptor["value"] as? String)?.lowercased() == value.lowercased(), "\(uuid) descriptor value")
                        valuesCompared += 1
                    } else {
                        // CCCDs (per client, null in the event): only Service Changed is
                        // subscribed (indications), by discovery itself.
                        #expect(descriptor["value"] as? String == (uuid == "2A05" ? "0200" : "0000"), "\(uuid) CCCD")
                    }
                }
            }
        }
        // The README's table: 16 characteristics, 10 descriptors; 12 characteristic values
        // and 5 descriptor values the event states (the rest are per read or per client).
        #expect(characteristicsCompared == 16)
        #expect(descriptorsCompared == 10)
        #expect(valuesCompared == 17)
        // Decoded values reach the output: the long value is complete, names are there.
        let longValue = ours.flatMap { $0["characteristics"] as? [[String: Any]] ?? [] }.first { $0["uuid"] as? String == RadioPeripheral.longValue }
        #expect((longValue?["value"] as? String)?.count == 1024)
        let battery = ours.first { $0["uuid"] as? String == "180F" }
        #expect(battery?["name"] as? String == "Battery")
        #expect(((battery?["characteristics"] as? [[String: Any]])?.first?["decoded"] as? String) == "87%")

        let report = try await Tshark.check(capture, excluding: RadioPeripheral.tsharkIncludeFalsePositive)
        #expect(report.packets > 50)
        #expect(report.malformed.isEmpty, "tshark: \(report.malformed)")
        // The exclusion hides exactly the one include response, nothing more.
        let all = try await Tshark.check(capture)
        #expect(all.malformed.split(separator: "\n").count == 1, "\(all.malformed)")
    }

    /// `bareble-trace gatt` on the capture of an explore gives the explore's own `--json`:
    /// the same text once both are parsed (key order aside), every member, values, decoded
    /// values, read errors and all. Nothing had to be left out: the address and its type
    /// come from the LE Connection Complete, the MTU from the exchange, the name from the
    /// Device Name read, the hash from the Read By Type for 0x2B2A, an error's text from the
    /// same Error Response the explorer got. Served again by `bareble-peripheral serve
    /// --database`: PeripheralToolVirtualRadio.cloneFromATrace.
    @Test func traceRebuildsTheExploresDatabaseFromItsCapture() async throws {
        let harness = try Self.harness.get()
        let capture = RadioPeripheral.temporaryPath("explore-gatt.btsnoop")
        let explore = try await RadioPeripheral.central(["explore", RadioPeripheral.address, "--json", "--no-auto-pair", "--btsnoop", capture] + RadioPeripheral.transport(harness))
        #expect(explore.status == 0, "\(explore.errors)")
        let trace = try await TraceTool.run(TraceTool.executable, ["gatt", capture])
        #expect(trace.status == 0, "\(trace.errors)")
        let explored = try #require(try JSONSerialization.jsonObject(with: Data(explore.output.utf8)) as? NSDictionary)
        let rebuilt = try #require(try JSONSerialization.jsonObject(with: Data(trace.output.utf8)) as? NSDictionary)
        let differing = Set((explored.allKeys + rebuilt.allKeys).compactMap { $0 as? String }).filter {
            !((explored[$0] as? NSObject)?.isEqual(rebuilt[$0]) ?? (rebuilt[$0] == nil))
        }
        #expect(differing.isEmpty, "members that differ: \(differing.sorted())")
        #expect(explored.isEqual(rebuilt))
        #expect((rebuilt["services"] as? [Any])?.count == 8)
        // Chosen by address, and from a pipe: the same.
        let piped = try await TraceTool.run(TraceTool.executable, ["gatt", "-", "--address", RadioPeripheral.address], input: try Data(contentsOf: URL(fileURLWithPath: capture)))
        #expect(piped.status == 0 && piped.output == trace.output, "\(piped.errors)")
        let elsewhere = try await TraceTool.run(TraceTool.executable, ["gatt", capture, "--address", "C4:4B:4D:00:00:99"])
        #expect(elsewhere.status != 0 && elsewhere.errors.contains("no primary service discovery"), "\(elsewhere.errors)")
    }

    @Test func theHumanTreeNamesEverything() async throws {
        let harness = try Self.harness.get()
        let result = try await RadioPeripheral.central(["explore", RadioPeripheral.address + "/random"] + RadioPeripheral.transport(harness))
        #expect(result.status == 0, "\(result.errors)")
        #expect(result.output.contains("BareBLE-HRM C4:4B:4D:00:00:01/random, ATT MTU 517, 8 services"))
        #expect(result.output.contains("secondary service 1804 TX Power"))
        #expect(result.output.contains("includes 1804 TX Power"))
        #expect(result.output.contains("characteristic 2A19 Battery Level  [0x0014] Read Notify"))
        #expect(result.output.contains("\"Read/write value\""))
    }

    @Test func readingTheEncryptedCharacteristicSaysToPair() async throws {
        let harness = try Self.harness.get()
        let result = try await RadioPeripheral.central(["read", RadioPeripheral.address, RadioPeripheral.encrypted, "--no-auto-pair"] + RadioPeripheral.transport(harness))
        #expect(result.status != 0)
        #expect(result.errors.contains("Insufficient Authentication"), "\(result.errors)")
        #expect(result.errors.contains("needs an encrypted link: pair first (`bareble-central pair`), or leave out --no-auto-pair"), "\(result.errors)")
    }

    /// Without --no-auto-pair the refusal makes the tool pair (Just Works with the radio's
    /// peer) and read again: the value arrives.
    @Test func readingTheEncryptedCharacteristicPairsAndReads() async throws {
        let harness = try Self.harness.get()
        let bonds = TestScratch.root + "/explore-bonds"
        defer { try? FileManager.default.removeItem(atPath: bonds) }
        let result = try await RadioPeripheral.central(
            ["read", RadioPeripheral.address, RadioPeripheral.encrypted, "--bond-dir", bonds] + RadioPeripheral.transport(harness))
        #expect(result.status == 0, "\(result.errors)")
        #expect(result.output.contains("736563726574"), "the value \"secret\": \(result.output)")
    }
}
