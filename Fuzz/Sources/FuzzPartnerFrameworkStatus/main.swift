import AppleSSO
import FuzzSupport

// The AP-Partner-Framework-Status reader: a typed error or a value, and a value it reads is written back
// in a form that reads to the same value.
Fuzz.run { data, count in
    let text = String(decoding: Fuzz.bytes(data, count), as: UTF8.self)
    if let status = try? PartnerFrameworkStatus(headerValue: text) {
        let again = try? PartnerFrameworkStatus(headerValue: status.headerValue)
        Fuzz.require(again == status, "a status read from a header does not survive writing and reading it back")
    }
    return 0
}
