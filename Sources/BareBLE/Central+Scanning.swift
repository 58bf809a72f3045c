import BluetoothCore
import HCI

extension Central {
    /// Advertisements matching `filter` for as long as the stream is iterated
    /// (`scanForPeripherals`); scanning stops when the last consumer stops.
    public func scan(
        matching filter: ScanFilter = .init(),
        parameters: ScanParameters = .init()
    ) -> AsyncThrowingStream<Advertisement, any Error> {
        scanner.advertisements(matching: filter, parameters: parameters)
    }

    /// The address with its type, learnt from the device's advertisements: how a user who
    /// typed only AA:BB:CC:DD:EE:FF gets connected. Nil when it is not heard within
    /// `timeout`.
    public func resolve(_ address: BluetoothAddress, timeout: Duration = .seconds(5)) async throws(HCIError) -> DeviceAddress? {
        let candidates = [DeviceAddress(address, type: .public), DeviceAddress(address, type: .random)]
        let filter = ScanFilter(addresses: Set(candidates), duplicates: .firstPerDevice)
        let advertisements = scan(matching: filter)
        let result: Result<DeviceAddress?, HCIError> = await withTaskGroup(of: Result<DeviceAddress?, HCIError>?.self) { group in
            group.addTask {
                do {
                    for try await advertisement in advertisements { return .success(advertisement.address) }
                } catch let error as HCIError {
                    return .failure(error)
                } catch {}
                return .success(nil)
            }
            group.addTask {
                try? await Task.sleep(for: timeout)
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first ?? .success(nil)
        }
        return try result.get()
    }
}
