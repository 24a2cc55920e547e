import Foundation
import SAML

extension SAMLError.Code {
    /// The configuration is not JSON or XML, or has no MVPD list.
    public static let mvpdConfigurationMalformed = Self("mvpd-config.malformed", httpStatus: 500)
    /// A known field has the wrong type or an MVPD lacks its id.
    public static let mvpdConfigurationInvalidField = Self("mvpd-config.invalid-field", httpStatus: 500)
}

extension MVPDConfiguration {
    /// Decodes a configuration document, JSON or XML (detected from the first byte).
    ///
    /// Lenient about unknown fields and nesting: the MVPD list is looked for as `mvpds` at the top level
    /// or inside `requestor` (or any other object), as an array or as an object holding the array under
    /// `mvpd`. Strict about the types of known fields: a boolean is a JSON boolean or the string
    /// `"true"`/`"false"` (v1 documents carry both), a string is a string, `requiredMetadataFields` is an
    /// array of strings or one comma-separated string.
    public static func decode(_ document: [UInt8]) throws -> MVPDConfiguration {
        let first = document.first { ![0x20, 0x09, 0x0A, 0x0D, 0xEF, 0xBB, 0xBF].contains($0) }
        return first == UInt8(ascii: "<") ? try decodeXML(document) : try decodeJSON(document)
    }

    /// The same, of a document held as text.
    public static func decode(_ document: String) throws -> MVPDConfiguration {
        try decode(Array(document.utf8))
    }

    /// Decodes a v1 or v2 JSON configuration.
    public static func decodeJSON(_ document: [UInt8]) throws -> MVPDConfiguration {
        let object: Any
        do {
            object = try JSONSerialization.jsonObject(with: Data(document))
        } catch {
            throw SAMLError(.mvpdConfigurationMalformed, "expected a JSON configuration, found text JSON cannot parse")
        }
        guard let list = findMVPDList(object, depth: 0) else {
            throw SAMLError(.mvpdConfigurationMalformed, "expected an mvpds list (top level or under requestor), found none")
        }
        return MVPDConfiguration(
            mvpds: try list.enumerated().map { index, entry in
                guard let fields = entry as? [String: Any] else {
                    throw SAMLError(.mvpdConfigurationInvalidField, "expected mvpds[\(index)] to be an object")
                }
                return try MVPD(fields: FieldReader(values: fields, position: "mvpds[\(index)]"))
            })
    }

    /// Decodes a v1 XML configuration: `mvpds` anywhere, each `mvpd` with child elements named after the
    /// fields (attributes are accepted too); `requiredMetadataFields` holds one child element per name, or
    /// comma-separated text.
    public static func decodeXML(_ document: [UInt8]) throws -> MVPDConfiguration {
        let root: SimpleXMLElement
        do {
            root = try SimpleXMLElement.parse(document)
        } catch let error as SAMLError {
            throw SAMLError(.mvpdConfigurationMalformed, "expected an XML configuration: \(error.message)")
        }
        guard let list = findMVPDElements(root) else {
            throw SAMLError(.mvpdConfigurationMalformed, "expected an mvpds element, found none")
        }
        return MVPDConfiguration(
            mvpds: try list.enumerated().map { index, element in
                var fields: [String: Any] = element.attributes
                for child in element.children {
                    if child.localName == "requiredMetadataFields" {
                        fields[child.localName] = child.children.isEmpty ? child.text : child.children.map(\.text)
                    } else {
                        fields[child.localName] = child.text
                    }
                }
                return try MVPD(fields: FieldReader(values: fields, position: "mvpd[\(index)]"))
            })
    }

    private static func findMVPDList(_ value: Any, depth: Int) -> [Any]? {
        guard depth < 6, let object = value as? [String: Any] else { return nil }
        if let mvpds = object["mvpds"] {
            if let array = mvpds as? [Any] { return array }
            if let nested = mvpds as? [String: Any], let array = nested["mvpd"] as? [Any] { return array }
            if let nested = mvpds as? [String: Any], let single = nested["mvpd"] as? [String: Any] { return [single] }
        }
        for key in object.keys.sorted() {
            if let found = findMVPDList(object[key]!, depth: depth + 1) { return found }
        }
        return nil
    }

    private static func findMVPDElements(_ element: SimpleXMLElement) -> [SimpleXMLElement]? {
        if element.localName == "mvpds" { return element.children.filter { $0.localName == "mvpd" } }
        for child in element.children {
            if let found = findMVPDElements(child) { return found }
        }
        return nil
    }
}

/// Reads typed fields out of a decoded JSON object (or an XML element turned into one).
struct FieldReader {
    var values: [String: Any]
    var position: String

    func string(_ key: String) throws -> String? {
        guard let value = values[key], !(value is NSNull) else { return nil }
        guard let string = value as? String else { throw invalid(key, "a string") }
        return string
    }

    func bool(_ key: String) throws -> Bool? {
        guard let value = values[key], !(value is NSNull) else { return nil }
        // JSON true/false arrive as a boolean NSNumber subclass; numbers 0/1 are not booleans here.
        if let number = value as? NSNumber, String(describing: type(of: number)).contains("Boolean") { return number.boolValue }
        if let string = value as? String {
            switch string.lowercased() {
            case "true": return true
            case "false": return false
            default: break
            }
        }
        throw invalid(key, "a boolean")
    }

    func strings(_ key: String) throws -> [String]? {
        guard let value = values[key], !(value is NSNull) else { return nil }
        if let array = value as? [Any] {
            return try array.map { element in
                guard let string = element as? String else { throw invalid(key, "an array of strings") }
                return string
            }
        }
        if let string = value as? String {
            return string.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        }
        throw invalid(key, "an array of strings")
    }

    private func invalid(_ key: String, _ expected: String) -> SAMLError {
        SAMLError(.mvpdConfigurationInvalidField, "expected \(position).\(key) to be \(expected), found \(type(of: values[key]!))")
    }
}

extension MVPD {
    init(fields: FieldReader) throws {
        guard let id = try fields.string("id"), !id.isEmpty else {
            throw SAMLError(.mvpdConfigurationInvalidField, "expected \(fields.position).id, found none")
        }
        self.init(
            id: id,
            displayName: try fields.string("displayName"),
            enablePlatformServices: try fields.bool("enablePlatformServices") ?? false,
            boardingStatus: try fields.string("boardingStatus").flatMap { $0.isEmpty ? nil : BoardingStatus(rawValue: $0) },
            displayInPlatformPicker: try fields.bool("displayInPlatformPicker") ?? false,
            platformMappingId: try fields.string("platformMappingId").flatMap { $0.isEmpty ? nil : $0 },
            requiredMetadataFields: try fields.strings("requiredMetadataFields") ?? [],
            enforcePlatformPermissions: try fields.bool("enforcePlatformPermissions") ?? false,
            logoUrl: try fields.string("logoUrl").flatMap { $0.isEmpty ? nil : $0 }
        )
        if let member = fields.values["authorization"], !(member is NSNull) {
            authorization = try ResourcePolicy(member: member, position: fields.position)
        }
    }
}
