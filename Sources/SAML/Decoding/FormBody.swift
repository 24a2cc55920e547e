import CookbookEncoding

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Just enough of `application/x-www-form-urlencoded` to find one field in a request body.
public enum FormBody {
    /// The text of the one field called `name` (percent-decoded once, `+` read as a space), or `nil` when
    /// the body has no such field. Throws `decode.duplicate-field`, `decode.invalid-percent-encoding`,
    /// `decode.not-utf8` or `decode.not-stream-safe`. For the plain fields of a form (`mvpd`, `deviceId`,
    /// ...); the `SAMLResponse` field is read by ``SAMLResponseDecoder``, which knows its Base64 rules.
    ///
    /// The text is Unicode stream-safe (at most 30 combining characters in a row): Swift's `==` and
    /// hashing normalise, which is quadratic in such a run, and these fields are compared with the
    /// configuration before anything is proven (a 240 KB `requestor` field cost 0.4 s a comparison).
    public static func text(named name: String, in body: [UInt8]) throws -> String? {
        try body.withUnsafeBytes { buffer in
            guard let raw = try field(named: name, in: buffer[...]) else { return nil }
            let decoded = try PercentDecoding.decode(raw, plusAsSpace: true)
            guard let text = String(validating: decoded, as: UTF8.self) else {
                throw SAMLError(.decodeNotUTF8, "expected UTF-8 in the \(name) field, found other bytes")
            }
            if let offset = decoded.withUnsafeBufferPointer({ StreamSafeText.firstViolation($0) }) {
                throw SAMLError(
                    .decodeNotStreamSafe,
                    "expected at most \(StreamSafeText.maximumNonStarters) combining characters in a row in the \(name) field, found more at byte \(offset)"
                )
            }
            return text
        }
    }

    /// A form body starts with `<field>=` or has a `&`; neither Base64 nor a percent-encoded value can.
    static func looksLikeFormBody(_ input: Slice<UnsafeRawBufferPointer>, fieldName: String) -> Bool {
        input.starts(with: Array(fieldName.utf8) + [UInt8(ascii: "=")]) || ASCII.contains(input, UInt8(ascii: "&"))
    }

    /// The raw (still percent-encoded) value of the one field called `name`, or nil when the body has none
    /// (an optional field's usual case: no message is made for it).
    static func field(named name: String, in body: Slice<UnsafeRawBufferPointer>) throws -> Slice<UnsafeRawBufferPointer>? {
        let wanted = Array(name.utf8)
        var found: Slice<UnsafeRawBufferPointer>?
        for (rawName, value) in Pairs(body) where matches(rawName, wanted) {
            guard found == nil else {
                throw SAMLError(.decodeDuplicateField, "expected one \(name) field, found more than one")
            }
            found = value
        }
        return found
    }

    /// `decode.missing-field` for a body without `name`, naming the first eight fields it has (each quoted,
    /// at most 32 bytes): read again only for this message, which a required field's absence alone needs
    /// (quoting every other name on every lookup was 1.2% of a service login).
    static func missingField(_ name: String, in body: Slice<UnsafeRawBufferPointer>) -> SAMLError {
        let names = Pairs(body).prefix(8).map { rawName, _ in
            decodedName(rawName).map { SAMLError.quote(bytes: $0.prefix(32)) } ?? SAMLError.quote(bytes: rawName.prefix(32))
        }
        let list = names.isEmpty ? "no fields" : "fields " + names.joined(separator: ", ")
        return SAMLError(.decodeMissingField, "expected a \(name) field in the form body, found \(list)")
    }

    /// Whether the raw field name `rawName` is `wanted` once percent-decoded.
    private static func matches(_ rawName: Slice<UnsafeRawBufferPointer>, _ wanted: [UInt8]) -> Bool {
        guard let decoded = decodedName(rawName) else { return rawName.elementsEqual(wanted) }
        return decoded == wanted
    }

    /// `rawName` percent-decoded (`+` as a space), or nil when it has nothing to decode; a name that is
    /// not valid percent-encoding stays as written.
    private static func decodedName(_ rawName: Slice<UnsafeRawBufferPointer>) -> [UInt8]? {
        guard ASCII.contains(rawName, UInt8(ascii: "%")) || ASCII.contains(rawName, UInt8(ascii: "+")) else { return nil }
        return (try? PercentDecoding.decode(Array(rawName), plusAsSpace: true)) ?? Array(rawName)
    }

    /// The `name=value` pairs of a body, raw, in order; empty pairs (`&&`) skipped, a pair without `=` has an
    /// empty value. One `memchr` per field: the SAMLResponse field is kilobytes long, a byte-by-byte split
    /// was 2% of a service request (docs/benchmarks-history.md, issue 28).
    private struct Pairs: Sequence, IteratorProtocol {
        private let body: Slice<UnsafeRawBufferPointer>
        private var start: Int

        init(_ body: Slice<UnsafeRawBufferPointer>) {
            self.body = body
            start = body.startIndex
        }

        mutating func next() -> (name: Slice<UnsafeRawBufferPointer>, value: Slice<UnsafeRawBufferPointer>)? {
            while start < body.endIndex {
                let end = ASCII.firstIndex(of: UInt8(ascii: "&"), in: body[start...])
                defer { start = end + 1 }
                guard end > start else { continue }
                let pair = body[start..<end]
                let equals = ASCII.firstIndex(of: UInt8(ascii: "="), in: pair)
                return (pair[pair.startIndex..<equals], equals == pair.endIndex ? pair[equals...] : pair[pair.index(after: equals)...])
            }
            return nil
        }
    }
}

/// Percent-decoding (RFC 3986 section 2.1), applied exactly once per call.
enum PercentDecoding {
    static func decode(_ input: [UInt8], plusAsSpace: Bool = false) throws -> [UInt8] {
        try input.withUnsafeBufferPointer { try decode($0, plusAsSpace: plusAsSpace) }
    }

    static func decode(_ input: Slice<UnsafeRawBufferPointer>, plusAsSpace: Bool = false) throws -> [UInt8] {
        try decode(UnsafeRawBufferPointer(rebasing: input).bindMemory(to: UInt8.self), plusAsSpace: plusAsSpace)
    }

    /// One pass writing into storage sized for the input (the output is never longer): the SAMLResponse
    /// field is kilobytes with an escape every few dozen bytes. The runs between escapes are found with
    /// `memchr` and copied whole (a byte-at-a-time loop was 2.5% of a service request on one core, issue
    /// 28); with `plusAsSpace`, a run also ends at `+`. A `%` without two hex digits after it is refused
    /// (`decode.invalid-percent-encoding`), or with `lenient` kept as written.
    static func decode(_ input: UnsafeBufferPointer<UInt8>, plusAsSpace: Bool, lenient: Bool = false) throws -> [UInt8] {
        var failure: Int?
        let output = [UInt8](unsafeUninitializedCapacity: input.count) { out, written in
            guard let source = input.baseAddress, let target = out.baseAddress else {
                written = 0
                return
            }
            var i = 0, o = 0
            let count = input.count
            // Where the next '%' and '+' are (count: none left), each searched again only once passed, so
            // that the whole input is scanned once for each whatever it holds.
            var percent = -1, plus = plusAsSpace ? -1 : count
            func find(_ byte: UInt8, from start: Int) -> Int {
                guard let found = memchr(source + start, Int32(byte), count - start) else { return count }
                return source.distance(to: found.assumingMemoryBound(to: UInt8.self))
            }
            while i < count {
                if percent < i { percent = find(UInt8(ascii: "%"), from: i) }
                if plus < i { plus = find(UInt8(ascii: "+"), from: i) }
                let next = min(percent, plus)
                (target + o).initialize(from: source + i, count: next - i)
                o += next - i
                i = next
                guard i < count else { break }
                if source[i] == UInt8(ascii: "+") {
                    target[o] = UInt8(ascii: " ")
                    i += 1
                } else {
                    if i + 2 < count, let high = Hex.value(source[i + 1]), let low = Hex.value(source[i + 2]) {
                        target[o] = high << 4 | low
                        i += 3
                    } else if lenient {
                        target[o] = source[i]
                        i += 1
                    } else {
                        failure = i
                        break
                    }
                }
                o += 1
            }
            written = o
        }
        if let i = failure {
            let excerpt = input[i..<min(i + 3, input.count)]
            throw SAMLError(
                .decodeInvalidPercentEncoding, "expected '%' and two hex digits at offset \(i), found \(SAMLError.quote(bytes: excerpt))")
        }
        return output
    }
}
