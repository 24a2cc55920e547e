import FuzzSupport
import SAML

// The request decoder on arbitrary bytes: a typed error or a document, never a crash; a document it
// returns is within the configured cap and starts like XML.
let decoder = SAMLResponseDecoder()

Fuzz.run { data, count in
    let input = Array(Fuzz.bytes(data, count))
    if let decoded = try? decoder.decode(input) {
        Fuzz.require(decoded.bytes.count <= decoder.options.maximumDecodedBytes, "decoded past the cap")
        Fuzz.require(decoded.bytes.first == UInt8(ascii: "<"), "decoded bytes that do not start like XML")
    }
    return 0
}
