import Foundation
import Testing

@testable import SAMLService

@Suite("Random identifiers")
struct RandomIdentifierTests {
    @Test("a version-4 UUID in lowercase, as Foundation reads and writes it; no two alike")
    func uuids() {
        let identifiers = (0..<2000).map { _ in RandomIdentifier.uuid() }
        for identifier in identifiers.prefix(200) {
            #expect(identifier.count == 36)
            #expect(UUID(uuidString: identifier)?.uuidString.lowercased() == identifier)
            let characters = Array(identifier)
            #expect(characters[14] == "4")
            #expect("89ab".contains(characters[19]))
            #expect(identifier.allSatisfy { "0123456789abcdef-".contains($0) })
        }
        #expect(Set(identifiers).count == identifiers.count)
    }
}
