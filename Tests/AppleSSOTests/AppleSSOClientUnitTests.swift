import AppleSSO
import Foundation
import SAML
import Testing

@testable import AppleSSOClient

/// The client's pieces that need no service: it reads the configuration answers AppleSSO writes, its
/// partner framework status reads back as AppleSSO reads it, and every outcome keeps its documented code
/// and next step (the table of the article "Apple SSO in your tvOS app").
@Suite("The app's client, piece by piece")
struct AppleSSOClientUnitTests {
    static let configuration = MVPDConfiguration(mvpds: [
        MVPD(
            id: "MVPD-A", displayName: "A", enablePlatformServices: true, boardingStatus: .supported, displayInPlatformPicker: true,
            platformMappingId: "ProviderA", requiredMetadataFields: ["NameID", "uid"]),
        MVPD(
            id: "MVPD-P", enablePlatformServices: true, boardingStatus: .picker, displayInPlatformPicker: true,
            platformMappingId: "ProviderP"),
        MVPD(id: "MVPD-N", platformMappingId: "ProviderN"),
    ])

    @Test("the configuration as REST API v2 and v1 answer it (AppleSSO's writers) reads the same")
    func configurationAnswers() throws {
        let v2 = try JSONDecoder().decode(
            AppleSSOClient.Configuration.self,
            from: Data(Self.configuration.json(requestor: .init(id: "REF30"), featured: ["MVPD-P", "MVPD-A"])))
        let v1 = try JSONDecoder().decode(AppleSSOClient.Configuration.self, from: Data(Self.configuration.jsonV1(requestor: "REF30")))
        #expect(v2.mvpds == v1.mvpds)
        #expect(v2.mvpds.map(\.id) == ["MVPD-A", "MVPD-P", "MVPD-N"])
        #expect(v2.mvpds.map(\.completesSingleSignOn) == [true, false, false])
        #expect(v2.mvpds[0].requiredMetadataFields == ["NameID", "uid"] && v2.mvpd(providerIdentifier: "ProviderP")?.id == "MVPD-P")
        #expect(
            v2.supportedProviderIdentifiers == ["ProviderA", "ProviderP"] && v2.featuredProviderIdentifiers == ["ProviderP", "ProviderA"])
        // v1 gives no picker lists: derived from the MVPDs shown in the picker.
        #expect(v1.supportedProviderIdentifiers == ["ProviderA", "ProviderP"] && v1.featuredProviderIdentifiers.isEmpty)
        // Only under `requestor`, as some answers nest it.
        let nested = try JSONDecoder().decode(
            AppleSSOClient.Configuration.self, from: Data(#"{"requestor":{"mvpds":[{"id":"X","enablePlatformServices":true}]}}"#.utf8))
        #expect(nested.mvpds.map(\.id) == ["X"] && nested.supportedProviderIdentifiers.isEmpty)
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(AppleSSOClient.Configuration.self, from: Data("{}".utf8)) }
    }

    @Test("the partner framework status the client sends reads back as AppleSSO reads it, with and without an expiration")
    func partnerFrameworkStatus() throws {
        let expiration = Date(timeIntervalSince1970: 1_735_689_600.123)
        let read = try PartnerFrameworkStatus(
            headerValue: FrameworkStatus(providerIdentifier: "Provider/A\"", expiration: expiration).headerValue)
        #expect(read.accessStatus == .granted && read.providerID == "Provider/A\"" && read.expirationMilliseconds == 1_735_689_600_123)
        let none = try PartnerFrameworkStatus(headerValue: FrameworkStatus(providerIdentifier: "ProviderA", expiration: nil).headerValue)
        #expect(none.providerID == "ProviderA" && none.expirationMilliseconds == nil)
        let mvpd = try read.validate(
            configuration: MVPDConfiguration(mvpds: [MVPD(id: "M", platformMappingId: "Provider/A\"")]), requestedMVPD: nil,
            now: SAMLInstant(millisecondsSinceEpoch: 1_735_689_600_000))
        #expect(mvpd.id == "M")
    }

    @Test("every outcome's code and next step, as the article's table says")
    func outcomeTable() {
        let error = AppleSSOClient.ServiceError(status: 400, code: "invalid_parameter_saml_response", action: "none")
        let table: [(AppleSSOOutcome, String?, AppleSSONextStep)] = [
            (.signedIn(.init(mvpd: "M")), nil, .continueToDecisions),
            (.alreadySignedIn(mvpd: "M"), nil, .continueToDecisions),
            (.profiles([.init(mvpd: "M")]), nil, .continueToDecisions),
            (.profiles([]), nil, .signIn),
            (.otherProviderChosen, "N003", .regularAuthentication(mvpd: nil)),
            (.providerNotSupported(providerIdentifier: "P"), "N004", .regularAuthentication(mvpd: nil)),
            (.pickerOnlyProvider(mvpd: "M"), nil, .regularAuthentication(mvpd: "M")),
            (.cancelled, "N005", .regularAuthentication(mvpd: nil)),
            (.partnerFrameworkStatus(header: "e30=", mvpd: "M"), nil, .continueToDecisions),
            (.missingParameters(["domainName"]), "missing_parameters_fallback", .report),
            (.accessDenied, "VSA403", .regularAuthentication(mvpd: nil)),
            (.accessNotDetermined, "VSA404", .regularAuthentication(mvpd: nil)),
            (.metadataRequestFailed(message: "m"), "VSA503", .regularAuthentication(mvpd: nil)),
            (.frameworkError(details: "d"), "APPL_ERROR", .regularAuthentication(mvpd: nil)),
            (.notSignedInToProvider, nil, .regularAuthentication(mvpd: nil)),
            (.regularFlow(reason: "degraded", mvpd: "M", url: nil, code: nil), "degraded", .regularAuthentication(mvpd: "M")),
            (.refused(error), "invalid_parameter_saml_response", .report),
            (.refused(.init(status: 503, code: "x", action: "retry")), "x", .retry(afterSeconds: nil)),
            (.refused(.init(status: 403, code: "y", action: "authentication")), "y", .regularAuthentication(mvpd: nil)),
            (.unauthorized(nil), "invalid_access_token", .renewAccessToken),
            (.unavailable(retryAfter: 7, nil), "service_unavailable", .retry(afterSeconds: 7)),
            (.networkFailure(message: "m"), "network_connection_failure", .retry(afterSeconds: nil)),
            (.unexpectedAnswer(status: 200, message: "m"), "unexpected_answer", .report),
            (.providerSignOutRequired([.init(mvpd: "M", actionName: "partner_logout")]), "VSA203", .showProviderSignOutInstruction),
            (
                .signedOut([.init(mvpd: "M", actionName: "logout", url: "https://mvpd.example/logout")]), nil,
                .openLogoutURL("https://mvpd.example/logout")
            ),
            (.signedOut([.init(mvpd: "M", actionName: "logout")]), nil, .nothing),
            (.noProfile, nil, .nothing),
        ]
        for (outcome, code, next) in table {
            #expect(outcome.code == code && outcome.nextStep == next, "\(outcome)")
        }
    }

    @Test("refusals: 401, 503 and 429 with Retry-After, an Enhanced Error Code, a body of another shape")
    func refusals() {
        let body = Data(#"{"action":"none","status":400,"code":"invalid_parameter_mvpd","message":"m"}"#.utf8)
        #expect(
            AppleSSOClient.failure(TransportResponse(status: 400, body: body))
                == .refused(.init(status: 400, code: "invalid_parameter_mvpd", message: "m", action: "none")))
        #expect(AppleSSOClient.failure(TransportResponse(status: 401)) == .unauthorized(nil))
        #expect(AppleSSOClient.failure(TransportResponse(status: 503, headers: ["Retry-After": " 3 "])) == .unavailable(retryAfter: 3, nil))
        #expect(
            AppleSSOClient.failure(TransportResponse(status: 429, headers: ["retry-after": "Wed, 21 Oct 2026 07:28:00 GMT"]))
                == .unavailable(retryAfter: nil, nil))
        #expect(AppleSSOClient.failure(TransportResponse(status: 500, body: Data("<html/>".utf8))).code == "unexpected_answer")
        let later = Data(#"{"action":"retry-after","status":403,"code":"too_many_requests"}"#.utf8)
        #expect(
            AppleSSOClient.failure(TransportResponse(status: 403, headers: ["Retry-After": "9"], body: later)).nextStep
                == .retry(afterSeconds: 9))
    }
}
