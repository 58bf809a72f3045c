/// Text a peer chose (a device name, a notification's message, a characteristic's string)
/// made safe to print on a terminal: control characters (C0, DEL, C1) are shown as
/// `\u{XX}` escapes instead of reaching the terminal, where ESC sequences could move the
/// cursor, rewrite what was printed or set the clipboard, and a newline could fake a line
/// of ours. Everything else, any language or emoji, is left as it is. JSON output needs
/// none of this: its writer escapes every control character.
public enum TerminalText {
    public static func printable(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: isControl) else { return text }
        var result = ""
        for scalar in text.unicodeScalars {
            if isControl(scalar) {
                result += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
            } else {
                result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    private static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
    }
}
