import Foundation
import Logging
import SAMLService
import Testing

@Suite("JSON logs")
struct JSONLogHandlerTests {
    @Test("one JSON object per line: fixed fields, the metadata at the top level, text escaped, nothing lost")
    func lines() throws {
        var ends: [Int32] = [0, 0]
        #expect(pipe(&ends) == 0)
        defer { close(ends[0]) }
        var logger = Logger(label: "saml-service") { label in
            DeferredMetadataLogHandler(wrapping: JSONLogHandler(label: label, descriptor: ends[1], metadataProvider: nil))
        }
        logger[metadataKey: "hb.request.id"] = "r1"
        logger.info("POST /api\n\"quoted\"", metadata: ["mvpd": "MVPD-A", "level": "clash", "list": ["a", "b"]])
        close(ends[1])
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = read(ends[0], &buffer, buffer.count)
            if count <= 0 { break }
            data.append(contentsOf: buffer[0..<count])
        }
        let lines = data.split(separator: 0x0A)
        #expect(lines.count == 1)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(lines[0])) as? [String: Any])
        #expect(object["message"] as? String == "POST /api\n\"quoted\"" && object["level"] as? String == "info")
        #expect(object["label"] as? String == "saml-service" && (object["time"] as? String)?.hasSuffix("Z") == true)
        #expect(object["mvpd"] as? String == "MVPD-A" && object["hb.request.id"] as? String == "r1")
        #expect(object["_level"] as? String == "clash" && object["list"] as? [String] == ["a", "b"])
    }
}
