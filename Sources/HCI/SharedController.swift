import BluetoothCore
import HCITransport

/// What a host beside the kernel (`hci-raw:N`) switched on in the controller, so it can be
/// switched off again when the host lets go: the kernel keeps its own idea of whether it
/// scans or advertises, and a controller left scanning behind its back makes the kernel's
/// next LE Set Scan Parameters or Create Connection fail with Command Disallowed.
struct SharedControllerChanges: Sendable, Equatable {
    var legacyScan = false
    var extendedScan = false
    var legacyAdvertising = false
    var advertisingSets: Set<UInt8> = []

    /// Records the effect of a command the controller accepted.
    mutating func note<Command: HCICommand>(_ command: Command) {
        switch command {
        case let command as LESetScanEnable: legacyScan = command.enable
        case let command as LESetExtendedScanEnable: extendedScan = command.enable
        case let command as LESetAdvertisingEnable: legacyAdvertising = command.advertisingEnable
        case let command as LESetExtendedAdvertisingEnable:
            let handles = command.sets.map(\.advertisingHandle)
            if command.enable {
                advertisingSets.formUnion(handles)
            } else if handles.isEmpty {
                advertisingSets = []  // Num_Sets 0 disables every set (7.8.56).
            } else {
                advertisingSets.subtract(handles)
            }
        case let command as LERemoveAdvertisingSet: advertisingSets.remove(command.advertisingHandle)
        case is LEClearAdvertisingSets: advertisingSets = []
        default: break
        }
    }

    var isEmpty: Bool { self == SharedControllerChanges() }

    /// The commands that undo what is recorded.
    var undoCommands: [any HCICommand] {
        var commands: [any HCICommand] = []
        if legacyScan { commands.append(LESetScanEnable(enable: false, filterDuplicates: false)) }
        if extendedScan { commands.append(LESetExtendedScanEnable(enable: false, filterDuplicates: .disabled)) }
        if legacyAdvertising { commands.append(LESetAdvertisingEnable(advertisingEnable: false)) }
        if !advertisingSets.isEmpty,
           let disable = try? LESetExtendedAdvertisingEnable(
               enable: false, sets: advertisingSets.sorted().map { .init(advertisingHandle: $0) }) {
            commands.append(disable)
        }
        return commands
    }

    var undoPackets: [HCIPacket] { undoCommands.map { HCIPacket(.command, $0.encode()) } }
}

extension HCIController {
    /// Switches off, and waits for, the scanning and advertising this host switched on in
    /// a controller shared with the kernel. Nothing to do on other transports.
    public func restoreSharedState() async throws(HCIError) {
        let undo = state.withLock { $0.sharedChanges.undoCommands }
        for command in undo { try await send(command) }
    }

    /// What this host has switched on and not yet off in a shared controller, for tests
    /// and tools: empty when the controller is as the kernel left it.
    public var sharedStateChanges: [String] {
        state.withLock { $0.sharedChanges.undoCommands.map { type(of: $0).name } }
    }
}
