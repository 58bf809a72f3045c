import ANCS
@testable import ANCSConsumer
import BluetoothCore
import Testing

/// App names a phone gave serve only that phone's next link: a device posing as an iPhone
/// cannot name Messages "Bank" for the real one. A bounded number of phones is kept.
@Suite struct AppNamesPerPhoneTests {
    @Test func namesAreKeptPerPhoneAndBounded() {
        var state = ANCSConsumer.State()
        let phone = DeviceAddress(BluetoothAddress(0x4C00_0000_0001), type: .public)
        let impostor = DeviceAddress(BluetoothAddress(0xC0FF_EE00_0002), type: .random)
        var real = AppNameCache()
        real.insert(AppNameCache.Entry(name: "Messages", isFallback: false), for: "com.apple.MobileSMS")
        var lie = AppNameCache()
        lie.insert(AppNameCache.Entry(name: "Bank", isFallback: false), for: "com.apple.MobileSMS")
        state.remember(real, for: phone)
        state.remember(lie, for: impostor)
        #expect(state.appNames[phone]?["com.apple.MobileSMS"]?.name == "Messages")
        for index in 0..<20 { state.remember(AppNameCache(), for: DeviceAddress(BluetoothAddress(UInt64(index)), type: .random)) }
        #expect(state.appNames.count == ANCSConsumer.phonesRemembered && state.appNamesOrder.count == ANCSConsumer.phonesRemembered)
        #expect(state.appNames[phone] == nil, "the phone remembered longest ago went first")
    }
}
