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
