import AppleSSO
import Crypto
import Foundation
import Hummingbird
import Logging

/// `POST /admin/sign-out` on the admin listener (with an admin token): an operator signs a device or a
/// subscriber out of every instance (docs/service.md, "Operations"). The body is JSON, one of:
///
/// - `{"device": "fingerprint <value>"}`, optionally with `"mvpd"`: the device's profiles (of that MVPD);
/// - `{"mvpd": "<id>", "attribute": "<user-metadata key>", "value": "<value>"}`: every profile of the
///   MVPD whose attribute (`userID`, `householdID`, ...: a value the MVPD signed) holds the value, on
///   every device: a scan of the MVPD's profiles.
///
/// Answers `200 {"removed": n}`, `400` (`invalid request`: any other member set, a member that is not
/// a non-empty string; `unknown mvpd`; `invalid device`: not `fingerprint <value>` as the API requires),
/// `401`, or `503` when the store cannot remove them (on a large table the subscriber's scan may pass
/// the store's deadline: `503`). Each sign-out is logged at `notice` with the MVPD, what it matched and how many it
/// removed; the device or the value only as the first 12 hex digits of its SHA-256 (personal data stays
/// out of the logs).
struct AdminSignOut: Sendable {
    let service: TokenExchangeService
    let credentials: Credentials

    func addRoute(to router: Router<BasicRequestContext>) {
        router.post("/admin/sign-out") { request, context in
            guard credentials.admitsAdmin(request.headers[.authorization]) else { return Self.answer(401, ["status": "unauthorized"]) }
            guard let body = try? await request.body.collect(upTo: 16 * 1024),
                case .object(let fields)? = try? JSONValue(parsing: body.readableBytesView, maxDepth: 4)
            else { return Self.answer(400, ["status": "invalid request"]) }
            return await signOut(fields, logger: context.logger)
        }
    }

    /// One of the two forms exactly: a member set that is neither (a misspelt `mvpd` would otherwise sign
    /// the device out of every MVPD), a member that is not a non-empty string of at most 1,024 bytes, an
    /// MVPD the configuration does not list or a device identifier the API would refuse: `400`, nothing
    /// removed.
    func signOut(_ fields: [String: JSONValue], logger: Logger) async -> Response {
        var text: [String: String] = [:]
        for (name, value) in fields {
            guard case .string(let value) = value, !value.isEmpty, value.utf8.count <= 1024 else {
                return Self.answer(400, ["status": "invalid request"])
            }
            text[name] = value
        }
        let mvpd = text["mvpd"]
        if let mvpd, service.mvpds.mvpd(id: mvpd) == nil { return Self.answer(400, ["status": "unknown mvpd"]) }
        let members = Set(text.keys)
        do {
            if members == ["device"] || members == ["device", "mvpd"] {
                let headers = RequestHeaders(deviceIdentifier: text["device"].flatMap { DeviceIdentifier.key(bytes: Array($0.utf8)) })
                guard service.checkDevice(headers) == nil, let key = headers.deviceIdentifier else {
                    return Self.answer(400, ["status": "invalid device"])
                }
                let removed = try await service.removeProfiles(device: key, mvpd: mvpd, by: "admin")
                logger.notice(
                    "admin: device signed out",
                    metadata: ["mvpd": "\(mvpd ?? "all")", "device_sha256": "\(Self.digest(key))", "removed": "\(removed.count)"])
                return Self.answer(200, ["removed": .integer(Int64(removed.count))])
            }
            if members == ["mvpd", "attribute", "value"], let mvpd, let attribute = text["attribute"], let value = text["value"] {
                let removed = try await service.removeSubscriber(mvpd: mvpd, attribute: attribute, value: value)
                logger.notice(
                    "admin: subscriber signed out",
                    metadata: [
                        "mvpd": "\(mvpd)", "attribute": "\(attribute)", "value_sha256": "\(Self.digest(value))", "removed": "\(removed)",
                    ])
                return Self.answer(200, ["removed": .integer(Int64(removed))])
            }
        } catch {
            logger.error("admin: sign-out failed: the store did not remove the profiles", metadata: ["mvpd": "\(mvpd ?? "all")"])
            return Self.answer(503, ["status": "store unavailable"])
        }
        return Self.answer(400, ["status": "invalid request"])
    }

    static func digest(_ text: String) -> String {
        SHA256.hash(data: Data(text.utf8)).prefix(6).map { String(format: "%02x", $0) }.joined()
    }

    static func answer(_ status: Int, _ object: [String: JSONValue]) -> Response {
        ServiceAnswer.json(status, JSONValue.object(object).bytes)
    }
}
