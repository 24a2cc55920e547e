import Foundation
import SAML

/// The outcome of one verification, as `saml verify` prints it.
struct VerificationReport {
    var error: SAMLError?
    var response: VerifiedResponse?
    var missingFields: [String] = []
    var skippedChecks: [String] = []

    static func run(input: [UInt8], verifier: SAMLResponseVerifier, at now: SAMLInstant, requiredFields: [String]) -> VerificationReport {
        var report = VerificationReport()
        do {
            let decoded = try SAMLResponseDecoder().decode(input)
            var response = try verifier.verifyWithoutReplayCheck(decoded.bytes, at: now)
            response.repairs = decoded.repairs + response.repairs
            report.response = response
            report.skippedChecks = response.skippedChecks.names
            let fields = try response.fields(requiredFields, allowMissing: true)
            report.missingFields = fields.missing
            if !fields.missing.isEmpty {
                _ = try response.fields(requiredFields)  // throws fields.missing with every name
            }
        } catch let error as SAMLError {
            report.error = error
        } catch {
            report.error = SAMLError(.xmlMalformed, "unexpected failure: \(error)")
        }
        return report
    }

    func json() -> String {
        var object: [String: Any] = [
            "valid": error == nil,
            "error": error.map { ["code": $0.code.identifier, "message": $0.message] } ?? NSNull(),
            "issuer": response?.assertion.issuer ?? NSNull(),
            "nameID": response?.assertion.nameID?.value ?? NSNull(),
            "missingFields": missingFields,
            "skippedChecks": skippedChecks,
        ]
        var attributes: [String: [String]] = [:]
        for attribute in response?.assertion.attributes ?? [] {
            attributes[attribute.name, default: []] += attribute.values
        }
        object["attributes"] = attributes
        if let response {
            object["signed"] = [
                response.signedParts.contains(.response) ? "response" : nil, response.signedParts.contains(.assertion) ? "assertion" : nil,
            ].compactMap { $0 }
            object["assertionID"] = response.assertion.id
            object["notOnOrAfter"] = response.assertion.notOnOrAfter?.description ?? NSNull()
            object["signingKeySHA256"] = response.signingKeyFingerprint
            object["repairs"] = response.repairs.map(\.rawValue)
            object["legacyAlgorithms"] = response.legacyAlgorithms
        }
        let data =
            (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data("{}".utf8)
        return String(decoding: data, as: UTF8.self)
    }

    func text() -> String {
        guard let response else {
            return "invalid: \(error.map { "\($0.code): \($0.message)" } ?? "")\n"
        }
        var lines = [error.map { "invalid: \($0.code): \($0.message)" } ?? "valid"]
        lines.append("issuer: \(response.assertion.issuer)")
        lines.append("nameID: \(response.assertion.nameID?.value ?? "-")")
        for attribute in response.assertion.attributes {
            lines.append("attribute \(attribute.name): \(attribute.values.joined(separator: ", "))")
        }
        if !skippedChecks.isEmpty { lines.append("skipped checks: \(skippedChecks.joined(separator: ", "))") }
        return lines.joined(separator: "\n") + "\n"
    }
}
