import AppleSSO
import FuzzSupport

// The MVPD configuration reader (v1 JSON/XML, v2 JSON) on arbitrary bytes: a typed error or a value.
Fuzz.run { data, count in
    _ = try? MVPDConfiguration.decode(Array(Fuzz.bytes(data, count)))
    return 0
}
