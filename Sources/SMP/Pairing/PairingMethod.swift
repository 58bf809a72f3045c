/// How the two devices authenticate each other (Core Vol 3 Part H 2.3.5.1).
public enum PairingMethod: Hashable, Sendable, CustomStringConvertible {
    case justWorks
    /// Secure Connections only: both show a six-digit value and confirm it matches.
    case numericComparison
    /// One device shows a passkey the user types on the other, or both users type the same.
    case passkeyEntry(PasskeyRoles)
    case outOfBand

    /// Who displays and who enters the passkey.
    public enum PasskeyRoles: Hashable, Sendable {
        case initiatorDisplays
        case responderDisplays
        case bothInput
    }

    /// Whether the method protects against a man in the middle (the keys are "authenticated").
    public var isAuthenticated: Bool { self != .justWorks }

    public var description: String {
        switch self {
        case .justWorks: "Just Works"
        case .numericComparison: "Numeric Comparison"
        case .passkeyEntry(.initiatorDisplays): "Passkey Entry (initiator displays)"
        case .passkeyEntry(.responderDisplays): "Passkey Entry (responder displays)"
        case .passkeyEntry(.bothInput): "Passkey Entry (both input)"
        case .outOfBand: "OOB"
        }
    }

    /// The method for these features (Core Vol 3 Part H 2.3.5.1, Tables 2.6, 2.7 and 2.8).
    ///
    /// - Legacy: OOB when both have OOB data; else Just Works unless one side asks for
    ///   MITM; else the IO capability table.
    /// - Secure Connections: OOB when either has the other's OOB data; else the same rule.
    public static func select(initiator: PairingFeatures, responder: PairingFeatures, secureConnections: Bool) -> PairingMethod {
        if secureConnections {
            if initiator.oobDataPresent || responder.oobDataPresent { return .outOfBand }
        } else if initiator.oobDataPresent && responder.oobDataPresent {
            return .outOfBand
        }
        let mitm = initiator.authenticationRequirements.contains(.mitm) || responder.authenticationRequirements.contains(.mitm)
        guard mitm else { return .justWorks }
        return fromIOCapabilities(initiator: initiator.ioCapability, responder: responder.ioCapability, secureConnections: secureConnections)
    }

    /// Table 2.8: mapping of IO capabilities to the key generation method.
    public static func fromIOCapabilities(initiator: IOCapability, responder: IOCapability, secureConnections: Bool) -> PairingMethod {
        let compare: PairingMethod = secureConnections ? .numericComparison : .justWorks
        switch (initiator, responder) {
        case (.noInputNoOutput, _), (_, .noInputNoOutput):
            return .justWorks
        case (.displayOnly, .displayOnly), (.displayOnly, .displayYesNo), (.displayYesNo, .displayOnly):
            return .justWorks
        case (.displayYesNo, .displayYesNo):
            return compare
        case (.displayOnly, .keyboardOnly), (.displayOnly, .keyboardDisplay),
             (.displayYesNo, .keyboardOnly), (.keyboardDisplay, .keyboardOnly):
            return .passkeyEntry(.initiatorDisplays)
        case (.keyboardOnly, .displayOnly), (.keyboardOnly, .displayYesNo), (.keyboardOnly, .keyboardDisplay),
             (.keyboardDisplay, .displayOnly):
            return .passkeyEntry(.responderDisplays)
        case (.keyboardOnly, .keyboardOnly):
            return .passkeyEntry(.bothInput)
        case (.displayYesNo, .keyboardDisplay):
            return secureConnections ? .numericComparison : .passkeyEntry(.initiatorDisplays)
        case (.keyboardDisplay, .displayYesNo):
            return secureConnections ? .numericComparison : .passkeyEntry(.responderDisplays)
        case (.keyboardDisplay, .keyboardDisplay):
            return secureConnections ? .numericComparison : .passkeyEntry(.initiatorDisplays)
        default:
            // Reserved capabilities never get here: pairing refuses them first.
            return .justWorks
        }
    }
}
