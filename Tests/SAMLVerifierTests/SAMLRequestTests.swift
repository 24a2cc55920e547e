import Foundation
import SAML
import SAMLTestSupport
import Testing

/// The requests the service hands out (``SAMLRequest``): their IDs and Subjects, and the documents checked
/// by other implementations: the OASIS protocol schema with xmllint, the signature with the xmlsec1
/// command, the whole request with pysaml2 reading it as an identity provider (scripts/interop/request-interop).
@Suite("SAML requests")
struct SAMLRequestTests {
    static let issuer = "https://saml.sp.auth.adobe.com"
    static let destination = "https://idp.mvpd.example.com/saml/aq"
    static let certificate = Vector.root.appendingPathComponent("keys/sp-rsa-2048.cert.pem")
    static let key = try! SigningKey(
        privateKeyPEM: Array(try! Data(contentsOf: Vector.root.appendingPathComponent("keys/sp-rsa-2048.key.pem"))),
        certificatePEM: Array(try! Data(contentsOf: certificate)))

    static func text(_ request: SAMLRequest) -> String { String(decoding: request.xml, as: UTF8.self) }

    /// One of each shape the service can emit: AuthnRequest and AttributeQuery (with and without a
    /// subject), unsigned and signed, the subject with every character that needs escaping.
    static func requests() throws -> [(name: String, request: SAMLRequest)] {
        var out: [(String, SAMLRequest)] = []
        for (signed, key) in [("unsigned", nil), ("signed", Self.key)] as [(String, SigningKey?)] {
            out.append(
                try (
                    "\(signed) AuthnRequest",
                    SAMLRequest(
                        issuer: issuer, destination: destination, assertionConsumerServiceURL: "https://sp.example/acs?a=1&b=2",
                        signingKey: key)
                ))
            out.append(
                try (
                    "\(signed) AttributeQuery without a subject",
                    SAMLRequest(
                        .attributeQuery(attributes: ["uid", "NameID", "uniqueId"]), issuer: issuer, destination: destination,
                        signingKey: key)
                ))
            out.append(
                try (
                    "\(signed) AttributeQuery without a Destination",
                    SAMLRequest(
                        .attributeQuery(attributes: ["uid", "NameID", "uniqueId"]), issuer: issuer, destination: nil, signingKey: key)
                ))
            out.append(
                try (
                    "\(signed) AttributeQuery about a subject",
                    SAMLRequest(
                        .attributeQuery(attributes: ["uid"], subject: #"user <&> "quoted" 'x'"#), issuer: issuer,
                        destination: destination, signingKey: key)
                ))
        }
        return out
    }

    @Test("fresh unpredictable IDs, AuthnRequest or AttributeQuery, signed with the SP key when asked")
    func requests() throws {
        let a = try SAMLRequest(
            issuer: "https://sp.example", destination: "https://idp.example/sso", assertionConsumerServiceURL: "https://sp.example/acs")
        let b = try SAMLRequest(issuer: "https://sp.example", destination: "https://idp.example/sso")
        #expect(a.id != b.id && a.id.count == 33 && a.id.hasPrefix("_"))
        let text = Self.text(a)
        #expect(text.hasPrefix("<samlp:AuthnRequest ") && text.contains(#"AssertionConsumerServiceURL="https://sp.example/acs""#))
        #expect(Data(base64Encoded: a.base64).map(Array.init) == a.xml)
        let query = try SAMLRequest(
            .attributeQuery(attributes: ["uid", "NameID", "uniqueId"]), issuer: "https://sp.example", destination: "https://idp.example/aq")
        #expect(Self.text(query).contains(#"<saml:Attribute Name="uniqueId""#))
        let signed = try SAMLRequest(issuer: "https://sp.example", destination: "https://idp.example/sso", signingKey: Self.key)
        let outline = try signed.xml.withUnsafeBytes { try DocumentOutline.read($0) }
        #expect(outline.signatures.count == 1)
        #expect(outline.signatures.first?.references.first?.uri == "#" + signed.id)
        #expect(throws: SAMLError(.configurationInvalidKey, "")) { try SigningKey(privateKeyPEM: Array("nope".utf8)) }
    }

    @Test("a given ID is the request's (and its signature's reference); one that is not a strict xs:NCName is refused unquoted")
    func chosenID() throws {
        for id in ["_a", "abc-1.2", "A_b", "é1"] {
            let request = try SAMLRequest(.attributeQuery(attributes: ["uid"]), id: id, issuer: Self.issuer, destination: Self.destination)
            #expect(request.id == id && Self.text(request).contains(#" ID="\#(id)" "#))
        }
        let signed = try SAMLRequest(id: "_chosen", issuer: Self.issuer, destination: Self.destination, signingKey: Self.key)
        let outline = try signed.xml.withUnsafeBytes { try DocumentOutline.read($0) }
        #expect(signed.id == "_chosen" && outline.signatures.first?.references.first?.uri == "#_chosen")
        for id in ["1abc", "-abc", ".abc", "\u{300}abc", "a b", "a'b", #"a"b"#, "a:b", "a<b", "a&b", "", "#abc", "a\u{0}"] {
            do {
                _ = try SAMLRequest(.attributeQuery(attributes: ["uid"]), id: id, issuer: Self.issuer, destination: Self.destination)
                Issue.record("accepted the request ID \(id.debugDescription)")
            } catch let error as SAMLError {
                #expect(error.code == .configurationInvalid)
                #expect(
                    error.message == "expected a request ID of xs:NCName characters starting with a letter or '_', found another")
            }
        }
    }

    @Test("an AttributeQuery always has a Subject: the given NameID, escaped, else a fresh transient pseudonym")
    func subject() throws {
        let known = try SAMLRequest(
            .attributeQuery(attributes: ["uid"], subject: "a<b&c"), issuer: Self.issuer, destination: Self.destination)
        #expect(
            Self.text(known).contains(
                #"<saml:Issuer>https://saml.sp.auth.adobe.com</saml:Issuer><saml:Subject><saml:NameID Format="urn:oasis:names:tc:SAML:1.1:nameid-format:unspecified">a&lt;b&amp;c</saml:NameID></saml:Subject><saml:Attribute Name="uid""#
            ))
        var pseudonyms: Set<String> = []
        for _ in 0..<2 {
            let request = try SAMLRequest(.attributeQuery(attributes: []), id: "_same", issuer: Self.issuer, destination: Self.destination)
            let text = Self.text(request)
            let prefix = #"</saml:Issuer><saml:Subject><saml:NameID Format="urn:oasis:names:tc:SAML:2.0:nameid-format:transient">"#
            let start = try #require(text.range(of: prefix))
            let end = try #require(text.range(of: "</saml:NameID></saml:Subject></samlp:AttributeQuery>"))
            let value = String(text[start.upperBound..<end.lowerBound])
            #expect(value.count == 40 && value.allSatisfy { $0.isHexDigit && !$0.isUppercase })
            pseudonyms.insert(value)
        }
        #expect(pseudonyms.count == 2, "a fresh pseudonym for every request, not derived from the (here equal) IDs")
    }

    @Test("values are escaped by Unicode scalar: no grapheme hides a markup character, no forbidden character goes out")
    func escapingByScalar() throws {
        #expect(XMLEscaping.escape("<\u{200D}b>") == "&lt;\u{200D}b&gt;")
        #expect(XMLEscaping.escape("\"\u{301} x=\"1") == "&quot;\u{301} x=&quot;1")
        #expect(XMLEscaping.escape("&\u{20DD}") == "&amp;\u{20DD}")
        #expect(XMLEscaping.escape("a\u{1}b\u{FFFE}c\u{0}") == "a\u{FFFD}b\u{FFFD}c\u{FFFD}")
        #expect(XMLEscaping.escape("x\ty\nz\r") == "x&#9;y&#10;z&#13;")
        #expect(XMLEscaping.escape("é 日本 🇫🇷") == "é 日本 🇫🇷")
        // In a request, the attribute values and texts that hold them stay values.
        let hostile = "https://idp.example/\"\u{301} evil=\"1<\u{200D}x>\u{1}"
        let text = Self.text(
            try SAMLRequest(.attributeQuery(attributes: [hostile], subject: hostile), issuer: hostile, destination: hostile))
        let escaped = "https://idp.example/&quot;\u{301} evil=&quot;1&lt;\u{200D}x&gt;\u{FFFD}"
        #expect(text.components(separatedBy: escaped).count - 1 == 4, "Destination, Issuer, NameID and the attribute's Name")
        #expect(!text.unicodeScalars.contains { $0.value == 1 } && !text.contains("\"\u{301}"))
    }

    @Test("every request validates against the OASIS SAML 2.0 protocol schema (xmllint)", .enabled(if: RequestInterop.enabled))
    func schema() throws {
        try RequestInterop.requireAvailable()
        for (name, request) in try Self.requests() {
            let result = try RequestInterop.run(["schema"], document: request.xml)
            #expect(result.status == 0, "\(name): \(result.error)")
        }
        // The check can fail: the query without its Subject is what the schema refuses.
        let query = Self.text(try SAMLRequest(.attributeQuery(attributes: ["uid"]), issuer: Self.issuer, destination: Self.destination))
        let start = try #require(query.range(of: "<saml:Subject>")), end = try #require(query.range(of: "</saml:Subject>"))
        var withoutSubject = query
        withoutSubject.removeSubrange(start.lowerBound..<end.upperBound)
        let refused = try RequestInterop.run(["schema"], document: Array(withoutSubject.utf8))
        #expect(refused.status != 0 && refused.error.contains("Subject"), "\(refused.error)")
    }

    @Test(
        "signed requests verify with the xmlsec1 command and the SP certificate; a tampered one does not",
        .enabled(if: RequestInterop.enabled))
    func signature() throws {
        try RequestInterop.requireAvailable()
        for (name, request) in try Self.requests() where name.hasPrefix("signed") {
            let result = try RequestInterop.run(["signature"], document: request.xml, after: [Self.certificate.path])
            #expect(result.status == 0, "\(name): \(result.error)")
        }
        let signed = try SAMLRequest(
            .attributeQuery(attributes: ["uid"]), issuer: Self.issuer, destination: Self.destination, signingKey: Self.key)
        let tampered = Self.text(signed).replacingOccurrences(of: #"Name="uid""#, with: #"Name="ssn""#)
        let result = try RequestInterop.run(["signature"], document: Array(tampered.utf8), after: [Self.certificate.path])
        #expect(result.status != 0, "xmlsec1 verified a tampered request")
    }

    @Test(
        "pysaml2's identity provider reads every request, checks the signed ones against SP metadata, refuses a tampered one",
        .enabled(if: RequestInterop.enabled))
    func pysaml2() throws {
        try RequestInterop.requireAvailable()
        let arguments = ["--issuer", Self.issuer, "--destination", Self.destination, "--sp-cert", Self.certificate.path]
        for (name, request) in try Self.requests() {
            let result = try RequestInterop.run(["pysaml2"], document: request.xml, after: arguments)
            try #require(result.status == 0, "\(name): \(result.error)")
            let read = try #require(try JSONSerialization.jsonObject(with: Data(result.output.utf8)) as? [String: Any])
            #expect(read["id"] as? String == request.id && read["issuer"] as? String == Self.issuer, "\(name)")
            #expect(read["signed"] as? Bool == name.hasPrefix("signed"), "\(name)")
            guard name.contains("AttributeQuery") else { continue }
            let nameID = try #require(read["nameID"] as? [String: String], "\(name)")
            if name.contains("about a subject") {
                #expect(nameID["format"] == "urn:oasis:names:tc:SAML:1.1:nameid-format:unspecified", "\(name)")
                #expect(nameID["value"] == #"user <&> "quoted" 'x'"#, "\(name)")
            } else {
                #expect(nameID["format"] == "urn:oasis:names:tc:SAML:2.0:nameid-format:transient", "\(name)")
                #expect(read["attributes"] as? [String] == ["uid", "NameID", "uniqueId"], "\(name)")
            }
        }
        let signed = try SAMLRequest(
            .attributeQuery(attributes: ["uid"]), issuer: Self.issuer, destination: Self.destination, signingKey: Self.key)
        let tampered = Self.text(signed).replacingOccurrences(of: #"Name="uid""#, with: #"Name="ssn""#)
        let result = try RequestInterop.run(["pysaml2"], document: Array(tampered.utf8), after: arguments)
        #expect(
            result.status == 1 && result.error.contains("refused: IncorrectlySigned"),
            "pysaml2 did not refuse the tampered signature: \(result.output) \(result.error)")
    }
}

/// scripts/interop/request-interop: xmllint, xmlsec1 and pysaml2 run on a request written to a temporary file.
/// Where they are missing (a developer's machine without `scripts/install-dependencies`) the tests that
/// need them are skipped; when `CI` is set (`.ci/run`) they run anyway and fail saying what is missing.
enum RequestInterop {
    struct Result {
        var status: Int32
        var output: String
        var error: String
    }

    static let script = Vector.root.deletingLastPathComponent().appendingPathComponent("scripts/interop/request-interop")
    static let availability: Result? = try? run(["available"])
    static var available: Bool { availability?.status == 0 }
    static var enabled: Bool { available || ProcessInfo.processInfo.environment["CI"] != nil }

    static func requireAvailable() throws {
        let why =
            availability.map { $0.error.trimmingCharacters(in: .whitespacesAndNewlines) } ?? "scripts/interop/request-interop did not run"
        try #require(available, "the interoperability tools are missing under CI: \(why)")
    }

    /// Runs the script with `arguments`, then the document's file when given, then `after`.
    static func run(_ arguments: [String], document: [UInt8]? = nil, after: [String] = []) throws -> Result {
        var files = arguments
        if let document {
            let file = try TemporaryFiles.file("saml-request.xml")
            try Data(document).write(to: file)
            files.append(file.path)
        }
        let process = Process()
        process.executableURL = script
        process.arguments = files + after
        let stdout = Pipe(), stderr = Pipe()
        process.standardOutput = stdout
        process.standardError = stderr
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let errorReader = PipeDrain(stderr.fileHandleForReading)
        let output = stdout.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Result(status: process.terminationStatus, output: String(decoding: output, as: UTF8.self), error: errorReader.finish())
    }
}
