import AppleSSO
import Foundation
import SAML
import Synchronization

/// The answers that depend only on the configuration (REST API v2's `configuration`, v1's MVPD list in
/// JSON and XML), built once per MVPD configuration snapshot instead of per request: with 602 MVPDs the
/// v2 answer is 378 KiB and took 11-15 ms to build, for a 50-byte anonymous request (issue 66).
///
/// v2's answer also carries the request's `device` and the current `time`, and its picker lists follow
/// the trust (an MVPD is listed while an identity provider is trusted for it, which a metadata refresh may
/// change): it is kept as a template split around those two values, rebuilt when the set of MVPDs whose
/// SSO completes changes. Each answer has an `ETag` (weak for v2: `time` differs from one answer to the
/// next), and `If-None-Match` with it gets `304`.
final class ConfigurationAnswers: Sendable {
    struct Built: Sendable {
        let body: [UInt8]
        let etag: String
    }

    private let mvpds: MVPDConfiguration
    private let requestor: MVPDConfiguration.Requestor
    private let featured: [String]
    let v1JSON: Built
    let v1XML: Built

    private struct Template {
        /// Which MVPDs completed SSO when it was built, in the configuration's order.
        let completes: [Bool]
        let split: Split?
    }
    private struct Split {
        /// The answer's bytes before `device`'s value, between it and `time`'s, and after.
        let head: [UInt8], middle: [UInt8], tail: [UInt8]
        let digest: [UInt8]
    }
    private let template = Mutex<Template?>(nil)

    init(_ mvpds: MVPDConfiguration, requestor: MVPDConfiguration.Requestor, featured: [String]) {
        self.mvpds = mvpds
        self.requestor = requestor
        self.featured = featured
        let json = mvpds.jsonV1(requestor: requestor.id)
        let xml = mvpds.xmlV1(requestor: requestor.id)
        v1JSON = Built(body: json, etag: Self.tag(BearerToken.digest(json), weak: false))
        v1XML = Built(body: xml, etag: Self.tag(BearerToken.digest(xml), weak: false))
    }

    /// v2's answer for a device of type `device` at `time`, with `completesSSO` as the trust says now.
    func v2(device: String, time: SAMLInstant, completesSSO: (String) -> Bool) -> Built {
        let completes = mvpds.mvpds.map { completesSSO($0.id) }
        let current =
            template.withLock { template -> Template? in
                template?.completes == completes ? template : nil
            } ?? build(completes)
        guard let current = current.split else {
            let body = mvpds.json(requestor: requestor, featured: featured, device: device, time: time, completesSSO: completesSSO)
            return Built(body: body, etag: Self.tag(BearerToken.digest(body), weak: true))
        }
        var body = current.head
        body += JSONValue.string(device).bytes
        body += current.middle
        body += Array(String(time.millisecondsSinceEpoch).utf8)
        body += current.tail
        return Built(body: body, etag: Self.tag(BearerToken.digest(current.digest + Array(device.utf8)), weak: true))
    }

    /// Splits an answer built with two markers in the places of `device` and `time`; either marker not
    /// found exactly once (a configuration's text that happens to hold one) leaves no template and the
    /// answer built whole each time.
    private func build(_ completes: [Bool]) -> Template {
        let ids = mvpds.mvpds.map(\.id)
        let completing = Set(zip(ids, completes).filter(\.1).map(\.0))
        let deviceMarker = "device-\(RandomIdentifier.uuid())"
        let timeMarker = Int64.min + 7_919
        let whole = mvpds.json(
            requestor: requestor, featured: featured, device: deviceMarker, time: SAMLInstant(millisecondsSinceEpoch: timeMarker),
            completesSSO: completing.contains)
        let deviceBytes = JSONValue.string(deviceMarker).bytes
        let timeBytes = Array(String(timeMarker).utf8)
        let built: Template
        if let device = Self.only(deviceBytes, in: whole), let time = Self.only(timeBytes, in: whole), device.upperBound <= time.lowerBound
        {
            built = Template(
                completes: completes,
                split: Split(
                    head: Array(whole[..<device.lowerBound]), middle: Array(whole[device.upperBound..<time.lowerBound]),
                    tail: Array(whole[time.upperBound...]),
                    // Of the parts around the two values, not of the whole (whose marker is random): the same
                    // configuration and trust give the same tag on every instance and after every rebuild.
                    digest: BearerToken.digest(
                        Array(whole[..<device.lowerBound]) + [0] + Array(whole[device.upperBound..<time.lowerBound]) + [0]
                            + Array(whole[time.upperBound...]))))
        } else {
            built = Template(completes: completes, split: nil)
        }
        template.withLock { $0 = built }
        return built
    }

    private static func only(_ needle: [UInt8], in haystack: [UInt8]) -> Range<Int>? {
        var found: Range<Int>?
        var index = 0
        while index + needle.count <= haystack.count {
            if haystack[index] == needle[0], haystack[index..<index + needle.count].elementsEqual(needle) {
                guard found == nil else { return nil }
                found = index..<index + needle.count
                index += needle.count
            } else {
                index += 1
            }
        }
        return found
    }

    private static func tag(_ digest: [UInt8], weak: Bool) -> String {
        let hex = digest.prefix(12).map { String(format: "%02x", $0) }.joined()
        return weak ? "W/\"\(hex)\"" : "\"\(hex)\""
    }

    /// Whether `If-None-Match` names `etag` (or is `*`), by the weak comparison RFC 9110 13.1.2 asks of it.
    static func matches(_ ifNoneMatch: String?, _ etag: String) -> Bool {
        guard let ifNoneMatch else { return false }
        let opaque = { (tag: Substring) -> Substring in tag.hasPrefix("W/") ? tag.dropFirst(2) : tag }
        let mine = opaque(Substring(etag))
        return ifNoneMatch.split(separator: ",").contains { candidate in
            let trimmed = candidate.trimmingCharacters(in: .whitespaces)
            return trimmed == "*" || opaque(Substring(trimmed)) == mine
        }
    }
}
