#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `write(2)` from the platform's C library (Glibc or Darwin), under a name that no type of this module
/// shadows (``StandardStreams`` has a `write(to:_:)` of its own).
func posixWrite(_ descriptor: Int32, _ bytes: UnsafeRawPointer, _ count: Int) -> Int {
    write(descriptor, bytes, count)
}
