/// The URI AD type's scheme compression (Core Specification Supplement Part A 1.18): the
/// URI is UTF-8 text whose first code point is not text but a scheme code from the
/// Assigned Numbers "URI Scheme Name String Mapping" (section 2.7). U+0001 means "no
/// scheme compressed", the URI's own text then carries it.
///
/// The code points run from U+0002 upwards, so those from U+0080 take two UTF-8 octets.
/// This file is the one place that table lives.
public enum URIScheme {
    /// The scheme code point meaning "the text that follows is the whole URI".
    public static let noScheme: UInt32 = 0x01

    /// The scheme text for `code` ("https:" for 0x17), "" for ``noScheme``, nil when
    /// unassigned.
    public static func name(for code: UInt32) -> String? {
        if code == noScheme { return "" }
        let index = Int(code) - firstCode
        guard index >= 0, index < table.names.count else { return nil }
        return table.names[index]
    }

    /// The code point for a scheme ("https:" gives 0x17), or nil when it has none.
    public static func code(for scheme: String) -> UInt32? {
        table.codes[scheme.lowercased()]
    }

    /// Expands the URI AD type's data: the scheme's text in place of its code point. An
    /// unassigned code is dropped (what follows is still the best guess at the URI);
    /// invalid UTF-8 is decoded with U+FFFD replacements. Nil for empty data.
    public static func expand(_ data: ArraySlice<UInt8>) -> String? {
        let text = String(decoding: data, as: UTF8.self)
        guard let first = text.unicodeScalars.first else { return nil }
        let rest = String(text.unicodeScalars.dropFirst())
        return (name(for: first.value) ?? "") + rest
    }

    /// The URI AD type's data for `uri`: the code point of its scheme when the table has
    /// one, else U+0001 and the whole text.
    public static func compress(_ uri: String) -> [UInt8] {
        if let colon = uri.firstIndex(of: ":") {
            let scheme = String(uri[...colon])
            if let code = code(for: scheme), let scalar = Unicode.Scalar(code) {
                return Array(String(scalar).utf8) + Array(uri[uri.index(after: colon)...].utf8)
            }
        }
        return [UInt8(noScheme)] + Array(uri.utf8)
    }

    /// Why a URI's data does not follow the format, if it does not; assumes valid UTF-8.
    static func problem(_ data: ArraySlice<UInt8>) -> ADMalformation.Reason? {
        let text = String(decoding: data, as: UTF8.self)
        guard let first = text.unicodeScalars.first else { return .missingURIScheme }
        return name(for: first.value) == nil ? .unassignedURIScheme(first.value) : nil
    }

    private static let firstCode = 0x02

    // Parsed once on first use (a static let is lazy and thread-safe). One name per
    // code point, in order from U+0002, whitespace separated: the table as data.
    private static let table: (names: [String], codes: [String: UInt32]) = {
        let names = data.split(whereSeparator: { $0 == " " || $0 == "\n" }).map(String.init)
        var codes: [String: UInt32] = [:]
        for (index, name) in names.enumerated() {
            codes[name] = UInt32(index + firstCode)
        }
        return (names, codes)
    }()

    private static let data = """
    aaa: aaas: about: acap: acct: cap: cid: coap: coaps: crid: data: dav: dict: dns:
    file: ftp: geo: go: gopher: h323: http: https: iax: icap: im: imap: info: ipp: ipps:
    iris: iris.beep: iris.xpc: iris.xpcs: iris.lwz: jabber: ldap: mailto: mid: msrp:
    msrps: mtqp: mupdate: news: nfs: ni: nih: nntp: opaquelocktoken: pop: pres: reload:
    rtsp: rtsps: rtspu: service: session: shttp: sieve: sip: sips: sms: snmp: soap.beep:
    soap.beeps: stun: stuns: tag: tel: telnet: tftp: thismessage: tn3270: tip: turn:
    turns: tv: urn: vemmi: ws: wss: xcon: xcon-userid: xmlrpc.beep: xmlrpc.beeps: xmpp:
    z39.50r: z39.50s: acr: adiumxtra: afp: afs: aim: apt: attachment: aw: barion:
    beshare: bitcoin: bolo: callto: chrome: chrome-extension: com-eventbrite-attendee:
    content: cvs: dlna-playsingle: dlna-playcontainer: dtn: dvb: ed2k: facetime: feed:
    feedready: finger: fish: gg: git: gizmoproject: gtalk: ham: hcp: icon: ipn: irc:
    irc6: ircs: itms: jar: jms: keyparc: lastfm: ldaps: magnet: maps: market: message:
    mms: ms-help: ms-settings-power: msnim: mumble: mvn: notes: oid: palm: paparazzi:
    pkcs11: platform: proxy: psyc: query: res: resource: rmi: rsync: rtmfp: rtmp:
    secondlife: sftp: sgn: skype: smb: smtp: soldat: spotify: ssh: steam: submit: svn:
    teamspeak: teliaeid: things: udp: unreal: ut2004: ventrilo: view-source: webcal:
    wtai: wyciwyg: xfire: xri: ymsgr: example: ms-settings-cloudstorage: bluetooth: bl:
    """
}
