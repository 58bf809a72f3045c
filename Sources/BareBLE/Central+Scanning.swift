import BluetoothCore
import HCI

extension Central {
    /// Advertisements matching `filter` for as long as the stream is iterated
    /// (`scanForPeripherals`); scanning stops when the last consumer stops.
    public func scan(
        matching filter: ScanFilter = .init(),
        parameters: ScanParameters = .init()
    ) -> AdvertisementStream {
        scanner.advertisements(matching: filter, parameters: parameters)
    }

    /// The address with its type, learnt from the device's advertisements: how a user who
    /// typed only AA:BB:CC:DD:EE:FF gets connected. Nil when it is not heard within
    /// `timeout`.
    public func resolve(_ address: BluetoothAddress, timeout: Duration = .seconds(5)) async throws(HCIError) -> DeviceAddress? {
        try await resolve(address, timeout: timeout, timer: .shared)
    }

    /// ``resolve(_:timeout:)`` with its deadline on `timer`.
    func resolve(_ address: BluetoothAddress, timeout: Duration, timer: DeadlineTimer) async throws(HCIError) -> DeviceAddress? {
        let candidates = [DeviceAddress(address, type: .public), DeviceAddress(address, type: .random)]
        let filter = ScanFilter(addresses: Set(candidates), duplicates: .firstPerDevice)
        let advertisements = scan(matching: filter)
        let listening = Task { () -> Result<DeviceAddress?, HCIError> in
            do {
                for try await advertisement in advertisements { return .success(advertisement.address) }
            } catch let error as HCIError {
                return .failure(error)
            } catch {}
            return .success(nil)
        }
        // The deadline ends the scan (a cancelled scan finishes empty), on the one timer
        // rather than a sleeping task that would outlive an early answer until `timeout`.
        let deadline = timer.schedule(after: timeout) { listening.cancel() }
        let result = await withTaskCancellationHandler { await listening.value } onCancel: { listening.cancel() }
        timer.cancel(deadline)
        return try result.get()
    }
}
