import HCI
import L2CAP

extension HostLink {
    /// The link layer's Connection Parameters Request procedure when both controllers have
    /// it, else (or when the link layer refuses with Unsupported Remote Feature) L2CAP's
    /// Connection Parameter Update Request, whose acceptance is followed by the central's
    /// LE Connection Update (``RemoteCentral/requestConnectionParameters(_:timeout:)``).
    func requestConnectionParameters(
        _ request: ConnectionParameterUpdateRequest, timeout: Duration
    ) async throws(PeripheralError) -> RemoteCentral.ParameterUpdate {
        if await bothSupportParametersRequest() {
            do {
                return .linkLayer(try await hci.updateParameters(request.connectionParameters, timeout: timeout))
            } catch .controller(.commandFailed(_, let status)) where status == .unsupportedRemoteFeature {
                // The central's link layer lacks the procedure after all: L2CAP it is.
            } catch {
                throw .connection(error)
            }
        }
        let update: UInt64
        do { update = try hci.expectConnectionUpdate() } catch { throw .connection(error) }
        do {
            try await channels.requestConnectionParameterUpdate(request, connection: hci.handle, timeout: timeout)
        } catch {
            hci.forgetConnectionUpdate(update)
            throw .signaling(error)
        }
        do { return .l2cap(try await hci.waitForConnectionUpdate(update, timeout: timeout)) } catch { throw .connection(error) }
    }

    private func bothSupportParametersRequest() async -> Bool {
        guard hci.controller.info?.leFeatures.contains(.connectionParametersRequestProcedure) == true else { return false }
        if let known = hci.remoteFeatures { return known.contains(.connectionParametersRequestProcedure) }
        // Unknown features (the read failed or is not supported): L2CAP works with every central.
        return (try? await hci.readRemoteFeatures())?.contains(.connectionParametersRequestProcedure) ?? false
    }
}
