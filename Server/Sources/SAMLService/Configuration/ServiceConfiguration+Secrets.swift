import AppleSSO
import Foundation
import Logging
import SAML

/// The secrets' forms: a file the configuration names, entries separated by lines or commas, request-ID
/// keys as `<id>:<hex>`; and the log level's names.
extension ServiceConfiguration {
    /// The non-empty lines (or comma-separated entries) of the secret file `setting` names, trimmed; a
    /// file with none is refused (an empty token file must not turn authentication off, issue 66) unless
    /// `allowingEmpty` (`bearerTokensFile` with ``ServiceConfiguration/allowUnauthenticatedAPI``).
    static func secret(_ path: String, setting: String, allowingReadable: Bool, allowingEmpty: Bool = false) throws -> [String] {
        let entries = entries(try secretText(path, setting: setting, allowingReadable: allowingReadable))
        guard !entries.isEmpty || allowingEmpty else {
            throw SAMLError(
                .configurationInvalid,
                "expected at least one entry in \(setting) (\(quoted(path))), found an empty file: remove the setting to go without it")
        }
        return entries
    }

    /// The text of the secret file `setting` names, without its final line break. Refused when it does
    /// not open (saying whether it is missing or unreadable by this process), when it is not a regular
    /// file, when it belongs to another user than this process's or root, and, unless `allowingReadable`
    /// (``ServiceConfiguration/allowReadableSecretFiles``), when anyone else may read or write it: others
    /// at all, or a group other than this process's own (a secret another account can read is no longer a
    /// secret: the request-ID keys mint request IDs for any device). Read by this process's own group is
    /// accepted, as Kubernetes mounts a Secret with `fsGroup` (mode 0440, group the pod's). The message
    /// names the mode and the owner, never the text.
    static func secretText(_ path: String, setting: String, allowingReadable: Bool) throws -> String {
        // Non-blocking: a FIFO at the path must not hang the start (it is refused below).
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard descriptor >= 0 else {
            let reason = errno
            let found =
                switch reason {
                case ENOENT, ENOTDIR: "none"
                case EACCES, EPERM: "one this process (uid \(getuid())) may not read: permission denied"
                default: "one that does not open: \(String(cString: strerror(reason)))"
                }
            throw SAMLError(.configurationInvalid, "expected a readable secret file for \(setting) at \(quoted(path)), found \(found)")
        }
        let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
        var status = stat()
        guard fstat(descriptor, &status) == 0, (status.st_mode & S_IFMT) == S_IFREG else {
            throw SAMLError(.configurationInvalid, "expected a regular secret file for \(setting) at \(quoted(path)), found another kind")
        }
        let mode = status.st_mode & 0o7777
        let described = "mode 0\(String(mode, radix: 8)) owned by \(owner(status.st_uid)):group \(status.st_gid)"
        if !allowingReadable {
            guard status.st_uid == geteuid() || status.st_uid == 0 else {
                throw SAMLError(
                    .configurationInvalid,
                    "expected the secret file for \(setting) at \(quoted(path)) owned by this process's user (uid \(geteuid())) or root, found \(described)"
                )
            }
            let groupReadIsOurs = mode & 0o040 == 0 || isOwnGroup(status.st_gid)
            guard mode & 0o037 == 0, groupReadIsOurs else {
                throw SAMLError(
                    .configurationInvalid,
                    "expected the secret file for \(setting) at \(quoted(path)) readable by its owner only (mode 0600 or 0400; 0440 with this process's group), found \(described): chmod go= the file, or set allowReadableSecretFiles"
                )
            }
        }
        let data = try handle.readToEnd() ?? Data()
        var text = String(decoding: data, as: UTF8.self)
        while text.hasSuffix("\n") || text.hasSuffix("\r") { text.removeLast() }
        return text
    }

    /// Whether `gid` is this process's group or one of its supplementary groups.
    private static func isOwnGroup(_ gid: gid_t) -> Bool {
        if gid == getegid() { return true }
        let count = getgroups(0, nil)
        guard count > 0 else { return false }
        var groups = [gid_t](repeating: 0, count: Int(count))
        let found = getgroups(count, &groups)
        return found > 0 && groups.prefix(Int(found)).contains(gid)
    }

    /// A user's name and uid (`uid 1000` alone when the system has no name for it).
    private static func owner(_ uid: uid_t) -> String {
        guard let entry = getpwuid(uid), let name = entry.pointee.pw_name else { return "uid \(uid)" }
        return "\(String(cString: name)) (uid \(uid))"
    }

    static func entries(_ text: String) -> [String] {
        text.split(whereSeparator: { $0 == "\n" || $0 == "," || $0 == "\r" }).map { $0.trimmingCharacters(in: .whitespaces) }.filter {
            !$0.isEmpty
        }
    }

    /// Request-ID keys from `<id>:<hex>` entries (as `requestKeysFile` holds them); never quotes a secret in an error.
    public static func parseRequestKeys(_ entries: [String]) throws -> [RequestIDKey] {
        try entries.enumerated().map { index, entry in
            let parts = entry.split(separator: ":", maxSplits: 1)
            guard parts.count == 2, let id = UInt8(parts[0]), parts[1].count % 2 == 0,
                let secret = Optional(Array(parts[1].utf8)).flatMap(hexBytes)
            else {
                throw SAMLError(
                    .configurationInvalid, "expected request-ID key \(index + 1) as <id 0-255>:<hexadecimal secret>, found another form")
            }
            return try RequestIDKey(id: id, secret: secret)
        }
    }

    static func hexBytes(_ digits: [UInt8]) -> [UInt8]? {
        func value(_ digit: UInt8) -> UInt8? {
            switch digit {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
            default: nil
            }
        }
        var bytes: [UInt8] = []
        for index in stride(from: 0, to: digits.count, by: 2) {
            guard let high = value(digits[index]), let low = value(digits[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
        }
        return bytes
    }

    static func level(_ text: String) throws -> Logger.Level {
        guard let level = Logger.Level(rawValue: text) else {
            throw SAMLError(
                .configurationInvalid, "expected a log level (trace, debug, info, notice, warning, error, critical), found \(quoted(text))")
        }
        return level
    }
}
