@testable import HCI
import Testing

/// What a host beside the kernel switched on, and the commands that switch it off again.
@Suite struct SharedControllerTests {
    @Test func scanningAndAdvertisingAreUndone() throws {
        var changes = SharedControllerChanges()
        #expect(changes.isEmpty && changes.undoCommands.isEmpty)
        changes.note(LESetExtendedScanEnable(enable: true, filterDuplicates: .disabled))
        changes.note(LESetAdvertisingEnable(advertisingEnable: true))
        changes.note(try LESetExtendedAdvertisingEnable(enable: true, sets: [.init(advertisingHandle: 2), .init(advertisingHandle: 0)]))
        let names = changes.undoCommands.map { type(of: $0).name }
        #expect(names == [LESetExtendedScanEnable.name, LESetAdvertisingEnable.name, LESetExtendedAdvertisingEnable.name])
        let disable = try #require(changes.undoCommands.last as? LESetExtendedAdvertisingEnable)
        #expect(!disable.enable && disable.sets.map(\.advertisingHandle) == [0, 2])
    }

    @Test func whatWasSwitchedOffIsForgotten() throws {
        var changes = SharedControllerChanges()
        changes.note(LESetScanEnable(enable: true, filterDuplicates: false))
        changes.note(LESetScanEnable(enable: false, filterDuplicates: false))
        changes.note(try LESetExtendedAdvertisingEnable(enable: true, sets: [.init(advertisingHandle: 1), .init(advertisingHandle: 3)]))
        changes.note(try LESetExtendedAdvertisingEnable(enable: false, sets: [.init(advertisingHandle: 1)]))
        changes.note(LERemoveAdvertisingSet(advertisingHandle: 3))
        #expect(changes.isEmpty)
        changes.note(try LESetExtendedAdvertisingEnable(enable: true, sets: [.init(advertisingHandle: 4)]))
        // Num_Sets 0 with Enable 0 disables every set.
        changes.note(try LESetExtendedAdvertisingEnable(enable: false, sets: []))
        #expect(changes.isEmpty)
        // Other commands change nothing.
        changes.note(Reset())
        #expect(changes.isEmpty)
    }
}
