import BluetoothCore

extension HCIController {
    /// Resets the controller and learns what it is (Core Vol 4 Part E 4 and Vol 6 Part D 2.1):
    /// on a transport shared with the kernel (`hci-raw:N`) it only learns: no Reset (it
    /// would drop the kernel's links), no event masks or LE Host Supported (the kernel's
    /// are set and include what an LE host needs), no ACL credits (the kernel owns the
    /// links' data).
    ///
    /// Reset, Read Local Version Information, Read Local Supported Commands and Features,
    /// LE Read Local Supported Features, Read BD_ADDR, buffer sizes (LE Read Buffer Size v2,
    /// then v1, then the shared Read Buffer Size), Set Event Mask, LE Set Event Mask with
    /// only the bits the controller can honour, and the LE limits the layers above need.
    @discardableResult
    public func powerOn() async throws(HCIError) -> ControllerInfo {
        publish(.bringingUp)
        do {
            let info = try await bringUp(shared: transport.sharesControllerWithKernel)
            store(info: info)
            publish(.ready(info))
            return info
        } catch {
            publish(.failed(error))
            throw error
        }
    }

    private func bringUp(shared: Bool) async throws(HCIError) -> ControllerInfo {
        resetFlowControl(aclBuffers: 0)
        if !shared { try await send(Reset()) }
        let version = try await send(ReadLocalVersionInformation())
        let commands = try await send(ReadLocalSupportedCommands()).commands
        let lmpFeatures = try await send(ReadLocalSupportedFeatures()).features
        guard lmpFeatures.contains(.leSupportedController) else {
            throw .unsupported("Bluetooth Low Energy (LMP feature 'LE Supported (Controller)' is clear)")
        }
        let leFeatures = try await send(LEReadLocalSupportedFeatures()).features
        let address = try await send(ReadBDADDR()).address

        // A dual-mode controller keeps LE host support off until the host says otherwise.
        if !shared, !lmpFeatures.contains(.brEdrNotSupported), commands.supports(WriteLEHostSupported.self) {
            try await send(WriteLEHostSupported(leSupportedHost: true))
        }

        let (aclBuffer, isoBuffer) = try await readBufferSizes(commands)
        if !shared { resetFlowControl(aclBuffers: aclBuffer.packetCount) }

        let eventMask = Self.eventMask(for: commands)
        let leEventMask = Self.leEventMask(version: version.hciVersion, commands: commands, features: leFeatures)
        if !shared {
            try await send(SetEventMask(mask: eventMask.rawValue))
            try await send(LESetEventMask(mask: leEventMask.rawValue))
        }

        var info = ControllerInfo(
            address: address, version: version, supportedCommands: commands,
            lmpFeatures: lmpFeatures, leFeatures: leFeatures,
            aclBuffer: aclBuffer, isoBuffer: isoBuffer,
            eventMask: eventMask, leEventMask: leEventMask
        )
        if commands.supports(LEReadMaximumDataLength.self) {
            info.maximumDataLength = try await send(LEReadMaximumDataLength())
        }
        if commands.supports(LEReadNumberOfSupportedAdvertisingSets.self) {
            info.numberOfAdvertisingSets = try await send(LEReadNumberOfSupportedAdvertisingSets()).numberOfSupportedAdvertisingSets
        }
        if commands.supports(LEReadMaximumAdvertisingDataLength.self) {
            info.maximumAdvertisingDataLength = try await send(LEReadMaximumAdvertisingDataLength()).maximumAdvertisingDataLength
        }
        if commands.supports(LEReadFilterAcceptListSize.self) {
            info.filterAcceptListSize = try await send(LEReadFilterAcceptListSize()).filterAcceptListSize
        }
        if commands.supports(LEReadResolvingListSize.self) {
            info.resolvingListSize = try await send(LEReadResolvingListSize()).resolvingListSize
        }
        if commands.supports(LEReadSupportedStates.self) {
            info.supportedStates = try await send(LEReadSupportedStates()).states
        }
        return info
    }

    /// LE buffers when the controller has them; a controller that reports zero LE buffers
    /// shares its BR/EDR buffers with LE (Core Vol 4 Part E 7.8.2).
    private func readBufferSizes(_ commands: SupportedCommands) async throws(HCIError) -> (acl: ControllerInfo.BufferSize, iso: ControllerInfo.BufferSize) {
        var acl = ControllerInfo.BufferSize(packetLength: 0, packetCount: 0, source: "none")
        var iso = ControllerInfo.BufferSize(packetLength: 0, packetCount: 0, source: "none")
        if commands.supports(LEReadBufferSizeV2.self) {
            let sizes = try await send(LEReadBufferSizeV2())
            acl = .init(packetLength: Int(sizes.leACLDataPacketLength), packetCount: Int(sizes.totalLEACLDataPackets), source: LEReadBufferSizeV2.name)
            iso = .init(packetLength: Int(sizes.isoDataPacketLength), packetCount: Int(sizes.totalISODataPackets), source: LEReadBufferSizeV2.name)
        } else {
            let sizes = try await send(LEReadBufferSizeV1())
            acl = .init(packetLength: Int(sizes.leACLDataPacketLength), packetCount: Int(sizes.totalLEACLDataPackets), source: LEReadBufferSizeV1.name)
        }
        if acl.packetLength == 0 || acl.packetCount == 0 {
            let shared = try await send(ReadBufferSize())
            acl = .init(packetLength: Int(shared.aclDataPacketLength), packetCount: Int(shared.totalACLDataPackets), source: ReadBufferSize.name + " (shared with BR/EDR)")
        }
        guard acl.packetLength > 0, acl.packetCount > 0 else {
            throw .unsupported("ACL data (the controller reports no ACL buffers)")
        }
        return (acl, iso)
    }

    /// The events an LE host handles; everything else stays masked so it costs nothing.
    static func eventMask(for commands: SupportedCommands) -> EventMask {
        var mask: EventMask = [.disconnectionComplete, .encryptionChangeV1, .hardwareError, .dataBufferOverflow, .encryptionKeyRefreshComplete, .leMeta]
        if commands.supports(ReadRemoteVersionInformation.self) { mask.insert(.readRemoteVersionInformationComplete) }
        return mask
    }

    /// One bit per LE subevent, set only when the controller can produce it: a feature or a
    /// supported command shows it, so no bit asks for something the controller lacks.
    static func leEventMask(version: UInt8, commands: SupportedCommands, features: LEFeatures) -> LEEventMask {
        var mask: LEEventMask = [.connectionComplete, .advertisingReport, .connectionUpdateComplete]
        if commands.supports(LEReadRemoteFeatures.self) { mask.insert(.readRemoteFeaturesComplete) }
        if features.contains(.leEncryption) { mask.insert(.longTermKeyRequest) }
        if features.contains(.leDataPacketLengthExtension) { mask.insert(.dataLengthChange) }
        if features.contains(.llPrivacy) {
            mask.insert(.directedAdvertisingReport)
        }
        if features.contains(.llPrivacy) || features.contains(.leExtendedAdvertising) {
            // Replaces LE Connection Complete and carries the resolvable addresses.
            mask.insert(.enhancedConnectionCompleteV1)
        }
        if features.contains(.le2MPHY) || features.contains(.leCodedPHY) { mask.insert(.phyUpdateComplete) }
        if features.contains(.leExtendedAdvertising) {
            mask.formUnion([.extendedAdvertisingReport, .scanTimeout, .advertisingSetTerminated, .scanRequestReceived])
            // v2 (Core 5.4) adds the advertising handle of the set that was connected to.
            if version >= 0x0D { mask.insert(.enhancedConnectionCompleteV2) }
        }
        if features.contains(.channelSelectionAlgorithm2) { mask.insert(.channelSelectionAlgorithm) }
        return mask
    }

    /// Hardware Error: report it (subscribers already saw the event), fail what was pending,
    /// then reset and bring the controller up again (Core Vol 4 Part E 7.7.16 leaves recovery
    /// to the host).
    func recover(fromHardwareError code: UInt8, count: Int) {
        logger.error("controller hardware error: resetting it", metadata: ["hardwareCode": .hex(code), "hardwareErrors": "\(count)"])
        let pending = state.withLock { state in
            state.commandCredits = 1
            return failAllCommands(&state, with: .hardwareError(code: code))
        }
        for command in pending { command.resume() }
        publish(.recovering(hardwareCode: code))
        Task { [weak self] in
            guard let self else { return }
            do {
                _ = try await self.powerOn()
                self.logger.notice("controller recovered from hardware error", metadata: ["hardwareCode": .hex(code)])
            } catch {
                self.logger.error("controller did not come back after hardware error", metadata: ["hardwareCode": .hex(code), "error": "\(error)"])
            }
        }
    }
}
