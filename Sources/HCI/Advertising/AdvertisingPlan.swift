import BluetoothCore

/// What the controller offers for advertising, read from ``ControllerInfo``.
struct AdvertisingCapabilities: Sendable, Equatable {
    /// LE Set Extended Advertising Parameters is supported: every set goes through the
    /// extended commands (a controller refuses to mix them with the legacy ones).
    var extendedCommands: Bool
    /// Maximum Advertising Data Length, capped at the specification's 1650.
    var maximumDataLength: Int
    /// How many handles may be in use at once (Num_Supported_Advertising_Sets, capped at
    /// the 0xF0 handles the specification defines); 1 for legacy controllers.
    var numberOfSets: Int

    /// The largest amount of data extended advertising can carry (Core Vol 4 Part E 7.8.57).
    static let specificationMaximumDataLength = 1650
    /// Advertising handles run 0x00 ... 0xEF (7.8.53).
    static let handleCount = 0xF0

    init(extendedCommands: Bool, maximumDataLength: Int, numberOfSets: Int) {
        self.extendedCommands = extendedCommands
        self.maximumDataLength = maximumDataLength
        self.numberOfSets = numberOfSets
    }

    init(_ info: ControllerInfo) {
        extendedCommands = info.supports(LESetExtendedAdvertisingParameters.self)
        if extendedCommands {
            // A controller with extended advertising must answer LE Read Maximum Advertising
            // Data Length; one that did not gets the legacy amount, which always fits.
            let reported = info.maximumAdvertisingDataLength.map(Int.init) ?? LegacyAdvertisingPayload.capacity
            maximumDataLength = min(reported, Self.specificationMaximumDataLength)
            numberOfSets = min(Int(info.numberOfAdvertisingSets ?? 1), Self.handleCount)
        } else {
            maximumDataLength = LegacyAdvertisingPayload.capacity
            numberOfSets = 1
        }
    }
}

/// A validated request: which commands and PDUs, in specification units. Built before any
/// command is sent, so every mistake a caller can make is an error with nothing on the air.
struct AdvertisingPlan: Sendable {
    let parameters: AdvertisingParameters
    let extendedCommands: Bool
    let legacyPDUs: Bool
    let intervalMinimum: UInt32
    let intervalMaximum: UInt32
    /// 10 ms units; 0 advertises until disabled.
    let durationUnits: UInt16
    let data: [UInt8]
    let scanResponse: [UInt8]
    let maximumDataLength: Int

    init(
        _ parameters: AdvertisingParameters, data: [UInt8], scanResponse: [UInt8]?,
        capabilities: AdvertisingCapabilities
    ) throws(AdvertisingError) {
        self.parameters = parameters
        self.data = data
        self.scanResponse = scanResponse ?? []
        extendedCommands = capabilities.extendedCommands
        maximumDataLength = capabilities.maximumDataLength

        let minimum = AdvertisingTime.units(parameters.interval, unitNanoseconds: AdvertisingTime.intervalUnitNanoseconds)
        let maximum = AdvertisingTime.units(parameters.maximumInterval ?? parameters.interval, unitNanoseconds: AdvertisingTime.intervalUnitNanoseconds)

        if extendedCommands {
            switch parameters.pduFormat {
            case .legacy: legacyPDUs = true
            case .extended: legacyPDUs = false
            case .automatic:
                // Legacy PDUs reach every scanner; extended ones only when something needs them.
                let legacyRange = AdvertisingTime.legacyIntervalUnits
                let fitsLegacy = data.count <= LegacyAdvertisingPayload.capacity
                    && self.scanResponse.count <= LegacyAdvertisingPayload.capacity
                    && parameters.primaryPHY == .le1M && parameters.secondaryPHY == .le1M
                    && (maximum.map { $0 <= legacyRange.upperBound } ?? true)
                // Data plus scan response for a connectable set, or advertising data for a
                // scannable one, exist only with legacy PDUs: stay legacy so that an
                // overflow is reported as the overflow it is.
                let onlyLegacyCarriesIt = switch parameters.kind {
                case .connectableUndirected: !self.scanResponse.isEmpty
                case .scannableUndirected: !data.isEmpty
                case .nonConnectableUndirected: false
                }
                legacyPDUs = fitsLegacy || onlyLegacyCarriesIt
            }
        } else {
            legacyPDUs = true
            if parameters.pduFormat == .extended { throw .requiresExtendedAdvertising("advertising with extended PDUs") }
            if parameters.txPower != nil { throw .requiresExtendedAdvertising("choosing the TX power") }
            if parameters.primaryPHY != .le1M || parameters.secondaryPHY != .le1M {
                throw .requiresExtendedAdvertising("advertising on a PHY other than LE 1M")
            }
            if parameters.duration != nil { throw .requiresExtendedAdvertising("an advertising duration") }
            if parameters.maximumEvents != nil { throw .requiresExtendedAdvertising("a maximum number of advertising events") }
            if parameters.advertisingSID != 0 { throw .requiresExtendedAdvertising("an advertising SID") }
        }

        try Self.checkKindAndData(
            parameters.kind, legacyPDUs: legacyPDUs, data: data, scanResponse: self.scanResponse,
            maximumDataLength: maximumDataLength
        )

        let range = legacyPDUs ? AdvertisingTime.legacyIntervalUnits : AdvertisingTime.extendedIntervalUnits
        let allowed = AdvertisingTime.duration(units: range.lowerBound, unitNanoseconds: AdvertisingTime.intervalUnitNanoseconds)
            ... AdvertisingTime.duration(units: range.upperBound, unitNanoseconds: AdvertisingTime.intervalUnitNanoseconds)
        guard let minimum, range.contains(minimum) else {
            throw .intervalOutOfRange(requested: parameters.interval, allowed: allowed, legacy: legacyPDUs)
        }
        guard let maximum, range.contains(maximum) else {
            throw .intervalOutOfRange(requested: parameters.maximumInterval ?? parameters.interval, allowed: allowed, legacy: legacyPDUs)
        }
        guard maximum >= minimum else {
            throw .intervalsReversed(minimum: parameters.interval, maximum: parameters.maximumInterval ?? parameters.interval)
        }
        intervalMinimum = minimum
        intervalMaximum = maximum

        if let power = parameters.txPower, !(-127...20).contains(power) {
            throw .invalidParameter("TX power \(power) dBm is outside -127 ... 20 dBm: choose a power in that range")
        }
        if legacyPDUs {
            if parameters.primaryPHY != .le1M || parameters.secondaryPHY != .le1M {
                throw .invalidParameter("legacy advertising PDUs are sent on LE 1M only: leave both PHYs at LE 1M or use extended PDUs")
            }
        } else {
            if parameters.primaryPHY != .le1M && parameters.primaryPHY != .leCoded {
                throw .invalidParameter("the primary advertising PHY must be LE 1M or LE Coded, not \(parameters.primaryPHY)")
            }
            if ![LEPHY.le1M, .le2M, .leCoded].contains(parameters.secondaryPHY) {
                throw .invalidParameter("the secondary advertising PHY must be LE 1M, LE 2M or LE Coded, not \(parameters.secondaryPHY)")
            }
        }
        if parameters.advertisingSID > 0x0F {
            throw .invalidParameter("advertising SID \(parameters.advertisingSID) is outside 0 ... 15: choose one in that range")
        }
        if let duration = parameters.duration {
            guard let units = AdvertisingTime.units(duration, unitNanoseconds: 10_000_000), (1...0xFFFF).contains(units) else {
                throw .invalidParameter("advertising duration \(AdvertisingTime.text(duration)) is outside 10 ms ... 655350 ms: choose one in that range, or none to advertise until stopped")
            }
            durationUnits = UInt16(units)
        } else {
            durationUnits = 0
        }
        if parameters.maximumEvents == 0 {
            throw .invalidParameter("a maximum of 0 advertising events would never advertise: give at least 1, or none for no limit")
        }
    }

    /// The rules that tie the kind of advertising to its data (Core Vol 4 Part E 7.8.53 -
    /// 7.8.55; Vol 6 Part B 2.3).
    static func checkKindAndData(
        _ kind: AdvertisingParameters.Kind, legacyPDUs: Bool, data: [UInt8], scanResponse: [UInt8],
        maximumDataLength: Int
    ) throws(AdvertisingError) {
        let limit = legacyPDUs ? LegacyAdvertisingPayload.capacity : maximumDataLength
        if data.count > limit { throw .dataTooLong(what: "advertising data", length: data.count, limit: limit) }
        if scanResponse.count > limit { throw .dataTooLong(what: "scan response data", length: scanResponse.count, limit: limit) }
        switch kind {
        case .nonConnectableUndirected:
            if !scanResponse.isEmpty { throw .scanResponseNotAllowed(kind) }
        case .connectableUndirected:
            if !legacyPDUs && !scanResponse.isEmpty { throw .connectableExtendedCannotBeScannable }
        case .scannableUndirected:
            if !legacyPDUs && (!data.isEmpty || scanResponse.isEmpty) { throw .extendedScannableNeedsScanResponseOnly }
        }
    }

    /// Whether the set answers scan requests, and so has scan response data to set.
    var isScannable: Bool {
        switch parameters.kind {
        case .connectableUndirected: legacyPDUs
        case .scannableUndirected: true
        case .nonConnectableUndirected: false
        }
    }

    var advertisingType: AdvertisingType {
        switch parameters.kind {
        case .connectableUndirected: .connectableUndirected
        case .scannableUndirected: .scannableUndirected
        case .nonConnectableUndirected: .nonConnectableUndirected
        }
    }

    var eventProperties: AdvertisingEventProperties {
        var properties: AdvertisingEventProperties = legacyPDUs ? [.useLegacyPDUs] : []
        switch parameters.kind {
        case .connectableUndirected:
            // ADV_IND is connectable and scannable; extended connectable may not be scannable.
            properties.insert(.connectable)
            if legacyPDUs { properties.insert(.scannable) }
        case .scannableUndirected: properties.insert(.scannable)
        case .nonConnectableUndirected: break
        }
        return properties
    }

    var ownAddressType: AddressType {
        parameters.ownAddress == .public ? .public : .random
    }

    /// Everything up to, not including, the enable command.
    func setupCommands(handle: UInt8, randomAddress: BluetoothAddress?) throws(AdvertisingError) -> [any HCICommand] {
        var commands: [any HCICommand] = []
        do throws(DecodeError) {
            if extendedCommands {
                commands.append(try LESetExtendedAdvertisingParameters(
                    advertisingHandle: handle,
                    advertisingEventProperties: eventProperties,
                    primaryAdvertisingIntervalMin: intervalMinimum,
                    primaryAdvertisingIntervalMax: intervalMaximum,
                    primaryAdvertisingChannelMap: parameters.channelMap,
                    ownAddressType: ownAddressType,
                    advertisingTxPower: parameters.txPower ?? LESetExtendedAdvertisingParameters.noTxPowerPreference,
                    primaryAdvertisingPHY: parameters.primaryPHY,
                    secondaryAdvertisingPHY: parameters.secondaryPHY,
                    advertisingSID: parameters.advertisingSID
                ))
                // The set exists only once its parameters are set (7.8.52: else 0x42).
                if let randomAddress {
                    commands.append(LESetAdvertisingSetRandomAddress(advertisingHandle: handle, randomAddress: randomAddress))
                }
            } else {
                if let randomAddress { commands.append(LESetRandomAddress(randomAddress: randomAddress)) }
                commands.append(LESetAdvertisingParameters(
                    advertisingIntervalMin: UInt16(intervalMinimum),
                    advertisingIntervalMax: UInt16(intervalMaximum),
                    advertisingType: advertisingType,
                    ownAddressType: ownAddressType,
                    advertisingChannelMap: parameters.channelMap
                ))
            }
        }
        catch { throw .invalidParameter("advertising parameters rejected: \(error)") }
        commands += try dataCommands(handle: handle)
        return commands
    }

    /// The data and scan response commands, fragmented for extended sets.
    func dataCommands(handle: UInt8) throws(AdvertisingError) -> [any HCICommand] {
        var commands: [any HCICommand] = []
        do throws(DecodeError) {
            if extendedCommands {
                // Extended scannable sets carry no advertising data (7.8.54 refuses it).
                if legacyPDUs || parameters.kind != .scannableUndirected {
                    for (operation, fragment) in Self.fragments(data) {
                        commands.append(try LESetExtendedAdvertisingData(advertisingHandle: handle, operation: operation, advertisingData: fragment))
                    }
                }
                if isScannable {
                    for (operation, fragment) in Self.fragments(scanResponse) {
                        commands.append(try LESetExtendedScanResponseData(advertisingHandle: handle, operation: operation, scanResponseData: fragment))
                    }
                }
            } else {
                commands.append(try LESetAdvertisingData(advertisingData: data))
                // Set even when empty, so a scan response from an earlier session cannot linger.
                if isScannable { commands.append(try LESetScanResponseData(scanResponseData: scanResponse)) }
            }
        }
        catch { throw .invalidParameter("advertising data rejected: \(error)") }
        return commands
    }

    /// Whether the data needs more than one command, which a controller accepts only while
    /// the set is disabled (7.8.54: Command Disallowed otherwise).
    var isFragmented: Bool {
        extendedCommands && (data.count > ExtendedAdvertisingPayload.capacity || scanResponse.count > ExtendedAdvertisingPayload.capacity)
    }

    func enableCommand(handle: UInt8) throws(AdvertisingError) -> any HCICommand {
        guard extendedCommands else { return LESetAdvertisingEnable(advertisingEnable: true) }
        do throws(DecodeError) {
            return try LESetExtendedAdvertisingEnable(enable: true, sets: [.init(
                advertisingHandle: handle, duration: durationUnits,
                maxExtendedAdvertisingEvents: parameters.maximumEvents ?? 0
            )])
        } catch {
            throw .invalidParameter("advertising enable rejected: \(error)")
        }
    }

    static func disableCommand(handle: UInt8, extendedCommands: Bool) -> any HCICommand {
        guard extendedCommands else { return LESetAdvertisingEnable(advertisingEnable: false) }
        // One set always fits Num_Sets, so this initializer cannot throw.
        return (try? LESetExtendedAdvertisingEnable(enable: false, sets: [.init(advertisingHandle: handle)]))
            ?? LESetAdvertisingEnable(advertisingEnable: false)
    }

    /// Data split into LE Set Extended Advertising Data fragments (7.8.54): one "complete"
    /// command when it fits 251 bytes, else first, intermediate ..., last.
    static func fragments(_ data: [UInt8]) -> [(AdvertisingDataOperation, [UInt8])] {
        let size = ExtendedAdvertisingPayload.capacity
        guard data.count > size else { return [(.completeData, data)] }
        var pieces: [(AdvertisingDataOperation, [UInt8])] = []
        var offset = 0
        while offset < data.count {
            let end = min(offset + size, data.count)
            let operation: AdvertisingDataOperation = offset == 0 ? .firstFragment : end == data.count ? .lastFragment : .intermediateFragment
            pieces.append((operation, Array(data[offset..<end])))
            offset = end
        }
        return pieces
    }
}
