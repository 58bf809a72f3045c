import BluetoothCore

/// What the controller is asked to do for all consumers together, and the commands that
/// say it. Combining: active if any consumer is; the shortest interval, with the longest
/// window any consumer asked for (capped at that interval), so no consumer gets less
/// radio time than it asked for; the union of PHYs; the controller's Filter Accept List
/// only if every consumer wants it (else some would miss devices), and likewise the
/// controller's duplicate filter; the own address type of the earliest consumer.
struct ScanConfiguration: Sendable, Hashable {
    var active: Bool
    var intervalUnits: UInt16
    var windowUnits: UInt16
    var le1M: Bool
    var coded: Bool
    var filterPolicy: ScanningFilterPolicy
    var ownAddressType: AddressType
    var controllerFiltersDuplicates: Bool
    var extended: Bool

    /// nil when there is nobody to scan for. Throws when the consumers ask for something
    /// the controller lacks, or for legacy and extended commands at once.
    static func combining(_ parameters: [ScanParameters], info: ControllerInfo?) throws(HCIError) -> ScanConfiguration? {
        guard let first = parameters.first else { return nil }
        var forced: Bool?
        for wish in parameters.compactMap(\.useExtendedCommands) {
            if let forced, forced != wish {
                throw .unsupported("legacy and extended scanning at the same time (one scan consumer forced legacy commands, another extended ones)")
            }
            forced = wish
        }
        let hasExtended = info.map { $0.supports(LESetExtendedScanParameters.self) && $0.supports(LESetExtendedScanEnable.self) } ?? false
        let coded = parameters.contains(where: \.codedPHY)
        let extended: Bool
        switch forced {
        case true?:
            guard hasExtended else { throw .unsupported("extended scanning (LE Set Extended Scan Parameters/Enable)") }
            extended = true
        case false?:
            guard !coded else { throw .unsupported("scanning on LE Coded with legacy scan commands (LE Coded needs extended scanning)") }
            extended = false
        case nil:
            extended = hasExtended
        }
        if coded {
            guard extended else { throw .unsupported("scanning on LE Coded (needs LE Set Extended Scan Parameters/Enable)") }
            guard info?.leFeatures.contains(.leCodedPHY) == true else { throw .unsupported("scanning on LE Coded (the LE Coded PHY feature)") }
        }
        let interval = parameters.map(\.intervalUnits).min() ?? first.intervalUnits
        let window = min(interval, parameters.map(\.windowUnits).max() ?? first.windowUnits)
        let filtered = parameters.allSatisfy { $0.filterPolicy.rawValue & 1 == 1 }
        let extendedPolicy = parameters.contains { $0.filterPolicy.rawValue & 2 == 2 }
        return ScanConfiguration(
            active: parameters.contains(where: \.active),
            intervalUnits: interval,
            windowUnits: window,
            le1M: parameters.contains(where: \.le1MPHY) || !coded,
            coded: coded,
            filterPolicy: ScanningFilterPolicy(rawValue: (extendedPolicy ? 2 : 0) | (filtered ? 1 : 0)),
            ownAddressType: first.ownAddressType,
            controllerFiltersDuplicates: parameters.allSatisfy(\.controllerFiltersDuplicates),
            extended: extended
        )
    }

    var legacyParameters: LESetScanParameters {
        LESetScanParameters(
            leScanType: active ? .active : .passive, leScanInterval: intervalUnits, leScanWindow: windowUnits,
            ownAddressType: ownAddressType, scanningFilterPolicy: filterPolicy
        )
    }

    var extendedParameters: LESetExtendedScanParameters {
        let perPHY = LESetExtendedScanParameters.PHYParameters(
            scanType: active ? .active : .passive, scanInterval: intervalUnits, scanWindow: windowUnits
        )
        return LESetExtendedScanParameters(
            ownAddressType: ownAddressType, scanningFilterPolicy: filterPolicy,
            le1M: le1M ? perPHY : nil, leCoded: coded ? perPHY : nil
        )
    }

    /// Sends the commands that make the controller scan this way (scanning is off).
    func enable(on controller: HCIController) async throws(HCIError) {
        if extended {
            try await controller.send(extendedParameters)
            try await controller.send(LESetExtendedScanEnable(enable: true, filterDuplicates: controllerFiltersDuplicates ? .enabled : .disabled))
        } else {
            try await controller.send(legacyParameters)
            try await controller.send(LESetScanEnable(enable: true, filterDuplicates: controllerFiltersDuplicates))
        }
    }

    /// Sends the command that stops this scan.
    func disable(on controller: HCIController) async throws(HCIError) {
        if extended {
            try await controller.send(LESetExtendedScanEnable(enable: false, filterDuplicates: .disabled))
        } else {
            try await controller.send(LESetScanEnable(enable: false, filterDuplicates: false))
        }
    }
}
