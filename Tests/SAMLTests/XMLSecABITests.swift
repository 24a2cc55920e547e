import CSAMLShim
import SAML
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The Swift and C views of libxmlsec1 must agree with the library as installed. SwiftPM drops the -D
/// flags of pkg-config, CSAMLShim.h restates them; these tests fail when the machine's pkg-config
/// reports a define the shim does not restate, or when the struct sizes differ from a C program compiled
/// with pkg-config's own flags. (No Foundation here: libxml2's ICU headers clash with Foundation's.)
@Suite("xmlsec ABI")
struct XMLSecABITests {
    @Test("the shim restates exactly the defines pkg-config reports")
    func restatedDefinesMatchPkgConfig() throws {
        let flags = try Shell.run("pkg-config --cflags xmlsec1-openssl")
        let reported = Set(flags.split(separator: " ").filter { $0.hasPrefix("-D") }.map { String($0.dropFirst(2)) })
        let restated = Set(String(cString: saml_shim_restated_defines()).split(separator: " ").map(String.init))
        #expect(!reported.isEmpty)
        #expect(reported.subtracting(restated).isEmpty, "pkg-config defines not restated in CSAMLShim.h")
        #expect(restated.subtracting(reported).isEmpty, "CSAMLShim.h restates defines pkg-config no longer reports")
    }

    @Test("struct sizes agree between Swift, the shim and a C program built with pkg-config's flags")
    func structSizesAgree() throws {
        let source = """
            #include <stdio.h>
            #include <xmlsec/xmlsec.h>
            #include <xmlsec/xmldsig.h>
            #include <xmlsec/xmlenc.h>
            int main(void) {
                printf("%zu %zu %zu %zu %zu", sizeof(xmlSecDSigCtx), sizeof(xmlSecDSigReferenceCtx),
                       sizeof(xmlSecKeyInfoCtx), sizeof(xmlSecTransformCtx), sizeof(xmlSecEncCtx));
                return 0;
            }
            """
        let directory = try Shell.run("mktemp -d").trimmingSuffix()
        defer { _ = try? Shell.run("rm -rf '\(directory)'") }
        try Shell.run("cat > '\(directory)/sizes.c' <<'EOF'\n\(source)\nEOF")
        try Shell.run("cc '\(directory)/sizes.c' -o '\(directory)/sizes' $(pkg-config --cflags --libs xmlsec1-openssl)")
        let library = try Shell.run("'\(directory)/sizes'").split(separator: " ").compactMap { Int($0) }
        let shim = [
            saml_shim_sizeof_dsig_ctx(), saml_shim_sizeof_dsig_reference_ctx(), saml_shim_sizeof_key_info_ctx(),
            saml_shim_sizeof_transform_ctx(), saml_shim_sizeof_enc_ctx(),
        ].map { Int($0) }
        let swift = [
            MemoryLayout<xmlSecDSigCtx>.size, MemoryLayout<xmlSecDSigReferenceCtx>.size,
            MemoryLayout<xmlSecKeyInfoCtx>.size, MemoryLayout<xmlSecTransformCtx>.size,
            MemoryLayout<xmlSecEncCtx>.size,
        ]
        #expect(library.count == 5)
        #expect(shim == library)
        #expect(swift == library)
    }

    @Test("xmlsec's transform registry: each klass found by its own href, the verifier's most used first")
    func transformRegistryOrder() throws {
        try XMLSecRuntime.initialize()
        let ids = try #require(xmlSecTransformIdsGet())
        let klasses = (0..<xmlSecPtrListGetSize(ids)).compactMap { index in
            xmlSecPtrListGetItem(ids, index).map { xmlSecTransformId($0.assumingMemoryBound(to: xmlSecTransformKlass.self)) }
        }
        #expect(klasses.count > 30)
        var hrefs: [String: Int] = [:]
        for klass in klasses {
            if let href = klass.pointee.href { hrefs[String(cString: href), default: 0] += 1 }
        }
        // What the start-up's reordering relies on: a lookup by an href that one klass has finds that klass.
        for klass in klasses {
            guard let href = klass.pointee.href, hrefs[String(cString: href)] == 1 else { continue }
            #expect(xmlSecTransformIdListFindByHref(ids, href, klass.pointee.usage) == klass)
        }
        let front = [
            xmlSecTransformExclC14NGetKlass(), xmlSecTransformEnvelopedGetKlass(), xmlSecOpenSSLTransformSha256GetKlass(),
            xmlSecOpenSSLTransformRsaSha256GetKlass(),
        ]
        #expect(Array(klasses.prefix(4)) == front)
    }

    @Test("initialisation succeeds when first triggered from many tasks at once")
    func initialisesConcurrently() async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<64 {
                group.addTask { try XMLSecRuntime.initialize() }
            }
            try await group.waitForAll()
        }
        #expect(XMLSecRuntime.compiledVersion.hasPrefix("1."))
    }
}

/// Runs a shell command and returns its standard output; throws when it exits non-zero.
enum Shell {
    struct Failure: Error, CustomStringConvertible {
        var command: String
        var status: Int32
        var description: String { "`\(command)` exited with \(status)" }
    }

    @discardableResult
    static func run(_ command: String) throws -> String {
        guard let pipe = popen(command, "r") else { throw Failure(command: command, status: -1) }
        var output = [UInt8]()
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = fread(&buffer, 1, buffer.count, pipe)
            if n == 0 { break }
            output.append(contentsOf: buffer[0..<n])
        }
        let status = pclose(pipe)
        guard status == 0 else { throw Failure(command: command, status: status) }
        return String(decoding: output, as: UTF8.self)
    }
}

extension String {
    func trimmingSuffix() -> String {
        var result = self
        while let last = result.last, last.isWhitespace { result.removeLast() }
        return result
    }
}
