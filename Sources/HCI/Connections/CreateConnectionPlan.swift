import BluetoothCore

/// The create-connection command for one attempt: LE Extended Create Connection when the
/// controller has it (Bluetooth 5 controllers refuse the legacy command once extended
/// commands were used), LE Create Connection otherwise.
struct CreateConnectionPlan: Sendable {
    enum Command: Sendable {
        case legacy(LECreateConnection)
        case extended(LEExtendedCreateConnection)
    }

    let command: Command

    init(peer: DeviceAddress, parameters: ConnectionParameters, info: ControllerInfo) throws(ConnectionError) {
        let ownAddressType = parameters.ownAddress.addressType
        if info.supports(LEExtendedCreateConnection.self) {
            let entry = LEExtendedCreateConnection.PHYParameters(
                scanInterval: parameters.scanInterval, scanWindow: parameters.scanWindow,
                connectionParameters: parameters.connection)
            let use2M = parameters.initiatingPHYs.contains(.le2M) && info.leFeatures.contains(.le2MPHY)
            let useCoded = parameters.initiatingPHYs.contains(.leCoded) && info.leFeatures.contains(.leCodedPHY)
            command = .extended(LEExtendedCreateConnection(
                ownAddressType: ownAddressType, peerAddressType: peer.type, peerAddress: peer.address,
                le1M: entry, le2M: use2M ? entry : nil, leCoded: useCoded ? entry : nil))
        } else if info.supports(LECreateConnection.self) {
            command = .legacy(LECreateConnection(
                leScanInterval: parameters.scanInterval, leScanWindow: parameters.scanWindow,
                peerAddressType: peer.type, peerAddress: peer.address, ownAddressType: ownAddressType,
                connectionParameters: parameters.connection))
        } else {
            throw .unsupported("LE Create Connection (it cannot be a central)")
        }
    }

    /// Whether the connection may come up on a PHY other than LE 1M.
    var mayUseOtherPHYs: Bool {
        if case let .extended(command) = command { return command.initiatingPHYs != .le1M }
        return false
    }

    func send(on controller: HCIController) async throws(HCIError) {
        switch command {
        case let .legacy(command): try await controller.send(command)
        case let .extended(command): try await controller.send(command)
        }
    }
}
