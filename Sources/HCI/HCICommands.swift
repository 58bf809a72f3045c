/// The catalogue of every command type BareBLE declares, for lookup by opcode (names in
/// traces and errors, Supported_Commands tables).
public enum HCICommands {
    /// Grouped as the files under Commands/ group them. A new command must be added here, or
    /// traces show it as a bare opcode and ``SupportedCommands`` never lists it.
    public static let all: [any HCICommand.Type] = [
        // LinkControlCommands.swift
        Disconnect.self,
        ReadRemoteVersionInformation.self,
        // ControllerCommands.swift
        Reset.self,
        SetEventMask.self,
        SetEventMaskPage2.self,
        WriteLEHostSupported.self,
        ReadLocalName.self,
        ReadTransmitPowerLevel.self,
        // InformationalCommands.swift
        ReadLocalVersionInformation.self,
        ReadLocalSupportedCommands.self,
        ReadLocalSupportedFeatures.self,
        ReadBufferSize.self,
        ReadBDADDR.self,
        ReadRSSI.self,
        ReadEncryptionKeySize.self,
        // LEControllerInformationCommands.swift
        LESetEventMask.self,
        LEReadBufferSizeV1.self,
        LEReadBufferSizeV2.self,
        LEReadLocalSupportedFeatures.self,
        LEReadSupportedStates.self,
        LEReadMaximumDataLength.self,
        LEReadSuggestedDefaultDataLength.self,
        LEWriteSuggestedDefaultDataLength.self,
        LEReadTransmitPower.self,
        // LEAdvertisingCommands.swift
        LESetRandomAddress.self,
        LESetAdvertisingParameters.self,
        LEReadAdvertisingPhysicalChannelTxPower.self,
        LESetAdvertisingData.self,
        LESetScanResponseData.self,
        LESetAdvertisingEnable.self,
        // LEExtendedAdvertisingCommands.swift
        LESetAdvertisingSetRandomAddress.self,
        LESetExtendedAdvertisingParameters.self,
        LESetExtendedAdvertisingData.self,
        LESetExtendedScanResponseData.self,
        LESetExtendedAdvertisingEnable.self,
        LEReadMaximumAdvertisingDataLength.self,
        LEReadNumberOfSupportedAdvertisingSets.self,
        LERemoveAdvertisingSet.self,
        LEClearAdvertisingSets.self,
        // LEScanningCommands.swift
        LESetScanParameters.self,
        LESetScanEnable.self,
        LESetExtendedScanParameters.self,
        LESetExtendedScanEnable.self,
        // LEConnectionCommands.swift
        LECreateConnection.self,
        LECreateConnectionCancel.self,
        LEExtendedCreateConnection.self,
        LEConnectionUpdate.self,
        LEReadRemoteFeatures.self,
        LESetDataLength.self,
        LERemoteConnectionParameterRequestReply.self,
        LERemoteConnectionParameterRequestNegativeReply.self,
        // LEPHYCommands.swift
        LEReadPHY.self,
        LESetDefaultPHY.self,
        LESetPHY.self,
        // LESecurityCommands.swift
        LEEncrypt.self,
        LERand.self,
        LEEnableEncryption.self,
        LELongTermKeyRequestReply.self,
        LELongTermKeyRequestNegativeReply.self,
        // LEFilterAcceptListCommands.swift
        LEReadFilterAcceptListSize.self,
        LEClearFilterAcceptList.self,
        LEAddDeviceToFilterAcceptList.self,
        LERemoveDeviceFromFilterAcceptList.self,
        // LEPrivacyCommands.swift
        LEAddDeviceToResolvingList.self,
        LERemoveDeviceFromResolvingList.self,
        LEClearResolvingList.self,
        LEReadResolvingListSize.self,
        LESetAddressResolutionEnable.self,
        LESetResolvablePrivateAddressTimeout.self,
        LESetPrivacyMode.self,
    ]

    private static let byOpcode: [HCIOpcode: any HCICommand.Type] = {
        var table: [HCIOpcode: any HCICommand.Type] = [:]
        for type in all { table[type.opcode] = type }
        return table
    }()

    public static func type(for opcode: HCIOpcode) -> (any HCICommand.Type)? { byOpcode[opcode] }
}
