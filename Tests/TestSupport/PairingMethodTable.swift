import SMP

/// Core Vol 3 Part H Table 2.8 (mapping of IO capabilities to the key generation method),
/// written out by hand for the pairing tests, so the stack is checked against the
/// specification and not against its own table. Rows: the initiator's capability,
/// columns: the responder's, by their command-line names. Each entry is (legacy, Secure
/// Connections): JW Just Works, NC Numeric Comparison, ID / RD / BI Passkey Entry with
/// the initiator displaying, the responder displaying, or both typing.
public enum PairingMethodTable {
    public static let rows: [String: [String: (legacy: String, secureConnections: String)]] = [
        "display-only": ["display-only": ("JW", "JW"), "display-yesno": ("JW", "JW"), "keyboard-only": ("ID", "ID"), "no-input-no-output": ("JW", "JW"), "keyboard-display": ("ID", "ID")],
        "display-yesno": ["display-only": ("JW", "JW"), "display-yesno": ("JW", "NC"), "keyboard-only": ("ID", "ID"), "no-input-no-output": ("JW", "JW"), "keyboard-display": ("ID", "NC")],
        "keyboard-only": ["display-only": ("RD", "RD"), "display-yesno": ("RD", "RD"), "keyboard-only": ("BI", "BI"), "no-input-no-output": ("JW", "JW"), "keyboard-display": ("RD", "RD")],
        "no-input-no-output": ["display-only": ("JW", "JW"), "display-yesno": ("JW", "JW"), "keyboard-only": ("JW", "JW"), "no-input-no-output": ("JW", "JW"), "keyboard-display": ("JW", "JW")],
        "keyboard-display": ["display-only": ("RD", "RD"), "display-yesno": ("RD", "NC"), "keyboard-only": ("ID", "ID"), "no-input-no-output": ("JW", "JW"), "keyboard-display": ("ID", "NC")],
    ]

    /// The method for an initiator and responder capability (names as in `rows`).
    public static func method(initiator: String, responder: String, secureConnections: Bool) -> String? {
        guard let entry = rows[initiator]?[responder] else { return nil }
        return secureConnections ? entry.secureConnections : entry.legacy
    }
}

extension PairingMethod {
    /// The abbreviation ``PairingMethodTable`` uses.
    public var tableAbbreviation: String {
        switch self {
        case .justWorks: "JW"
        case .numericComparison: "NC"
        case .passkeyEntry(.initiatorDisplays): "ID"
        case .passkeyEntry(.responderDisplays): "RD"
        case .passkeyEntry(.bothInput): "BI"
        case .outOfBand: "OOB"
        }
    }
}

/// One cell of the pairing matrix: our IO capability, the peer's, legacy or Secure
/// Connections, bonding or not.
public struct PairingCase: CustomStringConvertible, Sendable {
    public var ours: IOCapability
    public var theirs: IOCapability
    public var secureConnections: Bool
    public var bonding: Bool

    public init(ours: IOCapability, theirs: IOCapability, secureConnections: Bool, bonding: Bool) {
        self.ours = ours
        self.theirs = theirs
        self.secureConnections = secureConnections
        self.bonding = bonding
    }

    public var description: String {
        "\(ours.name) x \(theirs.name) \(secureConnections ? "SC" : "legacy") \(bonding ? "bond" : "no-bond")"
    }

    /// 25 IO capability pairs x {legacy, SC} x {bonding, not}: 100 cases.
    public static let all: [PairingCase] = IOCapability.allCases.flatMap { ours in
        IOCapability.allCases.flatMap { theirs in
            [false, true].flatMap { sc in [true, false].map { PairingCase(ours: ours, theirs: theirs, secureConnections: sc, bonding: $0) } }
        }
    }

    /// The table's method with us as the initiator (`weInitiate`) or the responder.
    public func expectedMethod(weInitiate: Bool) -> String {
        let (initiator, responder) = weInitiate ? (ours, theirs) : (theirs, ours)
        return PairingMethodTable.method(initiator: initiator.name, responder: responder.name, secureConnections: secureConnections) ?? "?"
    }
}
