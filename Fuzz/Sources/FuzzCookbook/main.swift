import AppleSSO
import Foundation
import FuzzSupport

// The cookbook codec against the cookbook's own Foundation code (CookbookOracle.swift, shared with the
// tests): byte for byte the same output on every string; the decoder reads back what was encoded.
Fuzz.run { data, count in
    let bytes = Fuzz.bytes(data, count)
    guard let text = String(validating: bytes, as: UTF8.self) else { return 0 }
    let encoded = Cookbook.encode(text)
    Fuzz.require(encoded == CookbookOracle.encode(text), "Cookbook.encode differs from the cookbook's code")
    Fuzz.require(Cookbook.normalize(text) == CookbookOracle.normalize(text), "Cookbook.normalize differs from the cookbook's code")
    return 0
}
