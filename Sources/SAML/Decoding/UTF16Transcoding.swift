/// UTF-16 documents, read as every XML processor must read them (XML 1.0, section 4.3.3 and appendix F):
/// transcoded to UTF-8 before anything else looks at them, so that the pre-scan, every cap and the parser
/// see exactly the bytes they see for the UTF-8 form of the same document, and the verdict and every value
/// are the same. (Canonical XML is UTF-8 whatever the document's encoding, so signatures verify alike.)
///
/// A document is UTF-16 when it starts with a UTF-16 byte order mark (FF FE little-endian, FE FF
/// big-endian), or, without one, with `<?` in UTF-16 (3C 00 3F 00, 00 3C 00 3F: the XML declaration,
/// which must then name UTF-16). The byte order mark is dropped; the declaration's `encoding` is left as
/// it is (the parser reads every document as UTF-8, `XML_PARSE_IGNORE_ENC`). An odd length, an unpaired
/// surrogate or a U+0000 is refused (`decode.not-utf16`), as is a declaration that names another encoding.
enum UTF16Transcoding {
    enum ByteOrder { case littleEndian, bigEndian }

    /// The byte order of a UTF-16 document, and how many bytes its byte order mark takes; nil for any other.
    static func detect(_ bytes: UnsafeRawBufferPointer) -> (order: ByteOrder, bom: Int)? {
        guard bytes.count >= 2 else { return nil }
        switch (bytes[0], bytes[1]) {
        case (0xFF, 0xFE): return bytes.count >= 4 && bytes[2] == 0 && bytes[3] == 0 ? nil : (.littleEndian, 2)  // not UCS-4
        case (0xFE, 0xFF): return (.bigEndian, 2)
        case (0x3C, 0x00) where bytes.count >= 4 && bytes[2] == 0x3F && bytes[3] == 0x00: return (.littleEndian, 0)
        case (0x00, 0x3C) where bytes.count >= 4 && bytes[2] == 0x00 && bytes[3] == 0x3F: return (.bigEndian, 0)
        default: return nil
        }
    }

    /// `bytes` in UTF-8 when they are a UTF-16 document (nil when they are not one), at most `maximumBytes`
    /// of it.
    static func utf8(_ bytes: UnsafeRawBufferPointer, maximumBytes: Int) throws -> [UInt8]? {
        guard let (order, bom) = detect(bytes) else { return nil }
        let units = bytes.count - bom
        guard units % 2 == 0 else {
            throw SAMLError(.decodeNotUTF16, "expected UTF-16 (an even number of bytes), found \(bytes.count) bytes")
        }
        func unit(_ index: Int) -> UInt32 {
            let a = UInt32(bytes[bom + 2 * index]), b = UInt32(bytes[bom + 2 * index + 1])
            return order == .littleEndian ? a | b << 8 : a << 8 | b
        }
        var output: [UInt8] = []
        output.reserveCapacity(min(units / 2 * 3, maximumBytes))
        var index = 0
        let count = units / 2
        while index < count {
            var scalar = unit(index)
            index += 1
            if scalar >= 0xD800, scalar < 0xDC00 {
                guard index < count, case let low = unit(index), low >= 0xDC00, low < 0xE000 else {
                    throw SAMLError(
                        .decodeNotUTF16, "expected a low surrogate after the high one at offset \(bom + 2 * index - 2), found none")
                }
                scalar = 0x10000 + (scalar - 0xD800) << 10 + (low - 0xDC00)
                index += 1
            } else if scalar >= 0xDC00, scalar < 0xE000 {
                throw SAMLError(.decodeNotUTF16, "expected a character, found an unpaired low surrogate at offset \(bom + 2 * index - 2)")
            } else if scalar == 0 {
                throw SAMLError(.decodeNotUTF16, "expected XML characters, found U+0000 at offset \(bom + 2 * index - 2)")
            }
            switch scalar {
            case 0..<0x80:
                output.append(UInt8(scalar))
            case 0x80..<0x800:
                output.append(contentsOf: [UInt8(0xC0 | scalar >> 6), UInt8(0x80 | scalar & 0x3F)])
            case 0x800..<0x10000:
                output.append(contentsOf: [UInt8(0xE0 | scalar >> 12), UInt8(0x80 | scalar >> 6 & 0x3F), UInt8(0x80 | scalar & 0x3F)])
            default:
                output.append(contentsOf: [
                    UInt8(0xF0 | scalar >> 18), UInt8(0x80 | scalar >> 12 & 0x3F), UInt8(0x80 | scalar >> 6 & 0x3F),
                    UInt8(0x80 | scalar & 0x3F),
                ])
            }
            guard output.count <= maximumBytes else {
                throw SAMLError(.xmlTooLarge, "expected at most \(maximumBytes) bytes of XML (in UTF-8), found more in a UTF-16 document")
            }
        }
        try checkDeclaration(output)
        return output
    }

    /// A declaration that names an encoding must name UTF-16 (`UTF-16`, `UTF-16LE`, `UTF-16BE`, any case).
    private static func checkDeclaration(_ utf8: [UInt8]) throws {
        guard utf8.starts(with: Array("<?xml".utf8)), let end = utf8.firstIndex(of: UInt8(ascii: ">")) else { return }
        let declaration = Array(utf8[..<end])
        let keyword = Array("encoding".utf8)
        guard let at = (0...max(0, declaration.count - keyword.count)).first(where: { declaration[$0...].starts(with: keyword) }),
            declaration.count >= keyword.count
        else { return }
        let rest = declaration[(at + keyword.count)...].drop { $0 == 0x20 || $0 == 0x3D || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D }
        guard let quote = rest.first, quote == UInt8(ascii: "\"") || quote == UInt8(ascii: "'") else { return }
        let name = String(decoding: rest.dropFirst().prefix { $0 != quote }, as: UTF8.self).uppercased()
        guard name.hasPrefix("UTF-16") || name == "UTF16" else {
            throw SAMLError(.decodeNotUTF16, "expected a UTF-16 document to declare UTF-16, found another encoding declared")
        }
    }
}
