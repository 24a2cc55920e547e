import CookbookEncoding

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Byte-level helpers shared by the decoding stages.
enum ASCII {
    static func trimmingWhitespace(_ bytes: Slice<UnsafeRawBufferPointer>) -> Slice<UnsafeRawBufferPointer> {
        bytes[XMLWhitespace.trimmedRange(bytes)]
    }

    /// `memchr`: whether `byte` occurs in `bytes`.
    static func contains(_ bytes: Slice<UnsafeRawBufferPointer>, _ byte: UInt8) -> Bool {
        guard let base = bytes.base.baseAddress, !bytes.isEmpty else { return false }
        return memchr(base + bytes.startIndex, Int32(byte), bytes.count) != nil
    }

    /// `memchr`: the index of the first `byte` in `bytes`, or `bytes.endIndex`.
    static func firstIndex(of byte: UInt8, in bytes: Slice<UnsafeRawBufferPointer>) -> Int {
        guard let base = bytes.base.baseAddress, !bytes.isEmpty,
            let found = memchr(base + bytes.startIndex, Int32(byte), bytes.count)
        else { return bytes.endIndex }
        return UnsafeRawPointer(found) - base
    }

    static let byteOrderMark: [UInt8] = [0xEF, 0xBB, 0xBF]

    /// `<` first, after an optional UTF-8 byte order mark.
    static func startsLikeXML(_ bytes: Slice<UnsafeRawBufferPointer>) -> Bool {
        bytes.first == UInt8(ascii: "<") || (bytes.starts(with: byteOrderMark) && bytes.dropFirst(3).first == UInt8(ascii: "<"))
    }

    static func startsWithUTF16ByteOrderMark(_ bytes: Slice<UnsafeRawBufferPointer>) -> Bool {
        bytes.starts(with: [0xFF, 0xFE]) || bytes.starts(with: [0xFE, 0xFF])
    }

    /// UTF-8, starts with `<` (after a BOM and whitespace), ends with `>` (before whitespace).
    static func checkXMLDocumentShape(_ bytes: UnsafeRawBufferPointer) throws {
        if startsWithUTF16ByteOrderMark(bytes[...]) {
            throw SAMLError(.decodeNotUTF8, "expected a UTF-8 document, found a UTF-16 byte order mark")
        }
        if let offset = UTF8Validation.firstInvalidOffset(bytes) {
            throw SAMLError(
                .decodeNotUTF8,
                "expected UTF-8, found the ill-formed byte 0x\(Hex.string([bytes[offset]])) at offset \(offset)"
            )
        }
        var body = bytes[...]
        if body.starts(with: byteOrderMark) { body = body.dropFirst(3) }
        body = trimmingWhitespace(body)
        guard let first = body.first, first == UInt8(ascii: "<") else {
            let found = body.first.map { "byte 0x" + Hex.string([$0]) } ?? "nothing"
            throw SAMLError(.decodeNotXML, "expected an XML document starting with '<', found \(found)")
        }
        guard body.last == UInt8(ascii: ">") else {
            throw SAMLError(
                .decodeTruncatedXML,
                "expected the document to end with '>', found \(SAMLError.quote(bytes: body.suffix(16))) (cut off?)"
            )
        }
    }
}
