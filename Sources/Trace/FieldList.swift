import BluetoothCore

/// The labelled fields of a decoded value, read from the project's own types by
/// reflection: a command's parameters, an event's, a PDU's. One definition serves the stack
/// and the trace, so a field added to a type shows up here without a second table.
enum FieldList {
    /// Labels that hold key material: shown only when the user asks (`--show-keys`).
    static let secretLabels: Set<String> = ["longTermKey", "identityResolvingKey", "signatureKey", "key", "ltk", "irk", "csrk"]

    static func of(_ value: Any, showKeys: Bool, prefix: String = "") -> [(String, String)] {
        var fields: [(String, String)] = []
        for child in Mirror(reflecting: value).children {
            guard let label = child.label else {
                // An enum case with an unlabelled payload: its fields, under the case's.
                fields += of(child.value, showKeys: showKeys, prefix: prefix)
                continue
            }
            let name = prefix + label
            if !showKeys, secretLabels.contains(label) {
                fields.append((name, "(redacted; --show-keys)"))
            } else {
                fields.append((name, text(child.value)))
            }
        }
        return fields
    }

    /// A field value as text: bytes in hex, optionals unwrapped, the rest as the type
    /// describes itself.
    static func text(_ value: Any) -> String {
        if let bytes = value as? [UInt8] { return bytes.isEmpty ? "(empty)" : Hex.string(bytes) }
        let mirror = Mirror(reflecting: value)
        if mirror.displayStyle == .optional {
            guard let wrapped = mirror.children.first?.value else { return "none" }
            return text(wrapped)
        }
        return String(describing: value)
    }
}
