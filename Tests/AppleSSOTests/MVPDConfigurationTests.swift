import AppleSSO
import SAML
import Testing

@Suite("MVPD configuration")
struct MVPDConfigurationTests {
    // Hand-written: no public sample of the v1 answers exists; these follow the documented field names.
    static let v1JSON = """
        {"id": "REF30", "unknownTopLevel": {"x": 1},
         "mvpds": {"mvpd": [
           {"id": "Cablevision", "displayName": "Optimum", "logoUrl": "https://x/logo.png",
            "enablePlatformServices": "true", "boardingStatus": "SUPPORTED", "displayInPlatformPicker": "true",
            "platformMappingId": "Cablevision", "requiredMetadataFields": ["uid", "NameID", "zip"]},
           {"id": "ATT", "displayName": "AT&T", "enablePlatformServices": false, "displayInPlatformPicker": false,
            "platformMappingId": "att"}
         ]}}
        """
    static let v1XML = """
        <?xml version="1.0" encoding="UTF-8"?>
        <config><id>REF30</id><mvpds>
          <mvpd><id>Cablevision</id><displayName>Optimum</displayName><enablePlatformServices>true</enablePlatformServices>
            <boardingStatus>PICKER</boardingStatus><displayInPlatformPicker>true</displayInPlatformPicker>
            <platformMappingId>Cablevision</platformMappingId>
            <requiredMetadataFields><field>uid</field><field>householdId</field></requiredMetadataFields>
            <somethingNew>ignored</somethingNew></mvpd>
          <mvpd><id>Dish</id><enablePlatformServices>false</enablePlatformServices>
            <requiredMetadataFields>uid, zip</requiredMetadataFields></mvpd>
        </mvpds></config>
        """
    static let v2Nested = """
        {"requestor": {"id": "REF30", "mvpds": [
          {"id": "Cablevision", "displayName": "Optimum", "enablePlatformServices": true, "boardingStatus": "SUPPORTED",
           "displayInPlatformPicker": true, "platformMappingId": "Cablevision", "enforcePlatformPermissions": true,
           "requiredMetadataFields": ["uid"], "newV2Field": [1, 2]},
          {"id": "Spectrum", "enablePlatformServices": true, "displayInPlatformPicker": true, "platformMappingId": "Charter"},
          {"id": "Hidden", "enablePlatformServices": true, "displayInPlatformPicker": false, "platformMappingId": "HiddenTV"}
        ]}}
        """

    @Test("decodes a v1 JSON configuration, lenient about unknown fields")
    func decodesV1JSON() throws {
        let configuration = try MVPDConfiguration.decode(Array(Self.v1JSON.utf8))
        #expect(configuration.mvpds.map(\.id) == ["Cablevision", "ATT"])
        let cablevision = try #require(configuration.mvpd(id: "Cablevision"))
        #expect(cablevision.enablePlatformServices && cablevision.displayInPlatformPicker)
        #expect(cablevision.boardingStatus == .supported)
        #expect(cablevision.requiredMetadataFields == ["uid", "NameID", "zip"])
        #expect(configuration.mvpd(platformMappingId: "att")?.id == "ATT")
        #expect(configuration.supportedProviderIdentifiers == ["Cablevision"])
    }

    @Test("decodes a v1 XML configuration")
    func decodesV1XML() throws {
        let configuration = try MVPDConfiguration.decode(Array(Self.v1XML.utf8))
        #expect(configuration.mvpds.map(\.id) == ["Cablevision", "Dish"])
        #expect(configuration.mvpd(id: "Cablevision")?.boardingStatus == .picker)
        #expect(configuration.mvpd(id: "Cablevision")?.requiredMetadataFields == ["uid", "householdId"])
        #expect(configuration.mvpd(id: "Dish")?.requiredMetadataFields == ["uid", "zip"])
        #expect(configuration.mvpd(id: "Dish")?.boardingStatus == nil)
    }

    @Test("decodes a v2 configuration with mvpds nested under requestor, and builds the picker lists")
    func decodesV2Nested() throws {
        let configuration = try MVPDConfiguration.decode(Array(Self.v2Nested.utf8))
        #expect(configuration.mvpds.count == 3)
        #expect(configuration.mvpd(id: "Cablevision")?.enforcePlatformPermissions == true)
        #expect(configuration.supportedProviderIdentifiers == ["Cablevision", "Charter"])
        #expect(configuration.featuredProviderIdentifiers(["Spectrum", "Hidden", "Unknown", "Cablevision"]) == ["Charter", "Cablevision"])
    }

    @Test(
        "is strict about the types of known fields",
        arguments: [
            #"{"mvpds": [{"id": "A", "enablePlatformServices": 5}]}"#,
            #"{"mvpds": [{"id": "A", "enablePlatformServices": "yes"}]}"#,
            #"{"mvpds": [{"id": "A", "requiredMetadataFields": [1]}]}"#,
            #"{"mvpds": [{"id": 7}]}"#,
            #"{"mvpds": [{"displayName": "no id"}]}"#,
            #"{"mvpds": ["A"]}"#,
        ])
    func rejectsWrongTypes(json: String) {
        #expect(throws: SAMLError(.mvpdConfigurationInvalidField, "")) { _ = try MVPDConfiguration.decode(Array(json.utf8)) }
    }

    @Test("refuses documents without an MVPD list or that do not parse")
    func rejectsMalformed() {
        for text in ["{\"requestor\": {}}", "not json", "<config/>", "<config><mvpds>"] {
            #expect(throws: SAMLError(.mvpdConfigurationMalformed, "")) { _ = try MVPDConfiguration.decode(Array(text.utf8)) }
        }
    }
}
