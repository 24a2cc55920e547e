/// Unicode's stream-safe text (UAX #15, section 13): no more than 30 non-starters (characters of a
/// canonical combining class other than 0) in a row.
///
/// Public for a service's own inputs: check text from a request with ``firstViolation(_:)`` before any
/// `==`, hashing or `hasPrefix` of it (the reference service does so for every header value and its
/// percent-decoded path and query; form fields and JSON strings are checked as they are read).
///
/// Swift compares and hashes strings by canonical equivalence, normalising as it goes, and normalising a
/// run of non-starters sorts the whole run: quadratic in its length. One run of 30,000 pairs of combining
/// marks in an attribute value (`Version`, an Issuer's text) cost about 0.9 s of CPU at the first `==`,
/// a whole 1 MiB document minutes; a document refused here never reaches a String comparison with such
/// a run, wherever one happens (document values are also compared byte for byte where both sides are the
/// document's: `String.hasSameBytes(as:)`). Real text, in any script, has a few marks per
/// character; UAX #15 chose 30 as what no real text needs.
public enum StreamSafeText {
    /// UAX #15's bound.
    public static let maximumNonStarters = 30

    /// The byte offset of the first non-starter past the 30th in a row, or nil. One pass; ASCII (never a
    /// non-starter) eight bytes at a time. Bytes that are not UTF-8 count as starters: libxml2 refuses
    /// them next.
    public static func firstViolation(_ bytes: UnsafeBufferPointer<UInt8>) -> Int? {
        var run = 0
        var seen = 0
        return firstViolation(bytes, continuing: &run, nonStarters: &seen)
    }

    /// The same for text that continues a run of `run` non-starters (pieces a reader joins into one
    /// string); `run` is left at the run the text ends with, and `nonStarters` counts every one seen.
    static func firstViolation(_ bytes: UnsafeBufferPointer<UInt8>, continuing run: inout Int, nonStarters: inout Int) -> Int? {
        guard let base = bytes.baseAddress else { return nil }
        let count = bytes.count
        var index = 0
        while index < count {
            // ASCII (markup, Base64) thirty-two bytes at a time, then eight, then one.
            if index + 32 <= count {
                let chunk = UnsafeRawPointer(base + index)
                let bits =
                    chunk.loadUnaligned(as: UInt64.self) | chunk.loadUnaligned(fromByteOffset: 8, as: UInt64.self)
                    | chunk.loadUnaligned(fromByteOffset: 16, as: UInt64.self)
                    | chunk.loadUnaligned(fromByteOffset: 24, as: UInt64.self)
                if bits & 0x8080_8080_8080_8080 == 0 {
                    run = 0
                    index += 32
                    continue
                }
            }
            if index + 8 <= count,
                UnsafeRawPointer(base + index).loadUnaligned(as: UInt64.self) & 0x8080_8080_8080_8080 == 0
            {
                run = 0
                index += 8
                continue
            }
            let lead = base[index]
            guard lead >= 0x80 else {
                run = 0
                index += 1
                continue
            }
            let length = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC0 ? 2 : 1
            guard length > 1, index + length <= count, let scalar = Self.scalar(base + index, length: length) else {
                run = 0
                index += 1
                continue
            }
            if isNonStarter(scalar) {
                nonStarters += 1
                run += 1
                if run > maximumNonStarters { return index }
            } else {
                run = 0
            }
            index += length
        }
        return nil
    }

    /// ``firstViolation(_:)`` of a string's UTF-8.
    public static func firstViolation(in text: String) -> Int? {
        var text = text
        return text.withUTF8 { firstViolation($0) }
    }

    /// ``firstViolation(_:)`` of `bytes` as they read once percent-decoded (RFC 3986, section 2.1): a
    /// request's path or query, whose marks are ASCII until decoded. `%` and two hex digits become their
    /// byte; anything else, a malformed escape included, stays as written (whoever reads the text refuses
    /// that for itself). The offset is in the decoded bytes. Decoding only joins what the bytes hold, so
    /// a run of the bytes as written is found too.
    public static func firstViolation(percentEncoded bytes: UnsafeBufferPointer<UInt8>) -> Int? {
        guard bytes.contains(UInt8(ascii: "%")) else { return firstViolation(bytes) }
        // Never throws: with `lenient`, every byte has an output.
        guard let decoded = try? PercentDecoding.decode(bytes, plusAsSpace: false, lenient: true) else { return 0 }
        return decoded.withUnsafeBufferPointer { firstViolation($0) }
    }

    /// A non-starter: a canonical combining class other than 0, or one of the few characters of class 0
    /// whose canonical decomposition begins with one (U+0F73, U+0F75, U+0F81).
    private static func isNonStarter(_ scalar: Unicode.Scalar) -> Bool {
        scalar.properties.canonicalCombiningClass != .notReordered
            || scalar.value == 0x0F73 || scalar.value == 0x0F75 || scalar.value == 0x0F81
    }

    /// The scalar of a well-formed UTF-8 sequence of `length` (2 to 4) bytes at `start`, or nil.
    private static func scalar(_ start: UnsafePointer<UInt8>, length: Int) -> Unicode.Scalar? {
        var decoder = UTF8()
        var iterator = UnsafeBufferPointer(start: start, count: length).makeIterator()
        guard case .scalarValue(let scalar) = decoder.decode(&iterator), iterator.next() == nil else { return nil }
        return scalar
    }
}
