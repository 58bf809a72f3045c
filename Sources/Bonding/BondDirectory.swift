import Glibc

/// Where bonds live when the user does not say: `$XDG_STATE_HOME/bareble/bonds`, else
/// `~/.local/state/bareble/bonds` (XDG Base Directory: state that survives restarts but is
/// not worth backing up like configuration; bonds are exactly that).
public enum BondDirectory {
    public static var defaultPath: String {
        // The XDG specification says relative values are invalid and must be ignored.
        if let state = environment("XDG_STATE_HOME"), state.hasPrefix("/") {
            return state + "/bareble/bonds"
        }
        return home + "/.local/state/bareble/bonds"
    }

    static var home: String {
        if let home = environment("HOME"), !home.isEmpty { return home }
        // A service started without HOME (systemd units often are): ask the password database.
        if let entry = getpwuid(getuid()), let directory = entry.pointee.pw_dir { return String(cString: directory) }
        return "/"
    }

    static func environment(_ name: String) -> String? {
        getenv(name).map { String(cString: $0) }
    }
}
