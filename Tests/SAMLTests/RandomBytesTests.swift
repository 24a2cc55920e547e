import Testing

@testable import SAML

@Suite("Random bytes")
struct RandomBytesTests {
    @Test("exactly the bytes asked for, eight from each draw and the rest of the last one dropped; never the same twice")
    func counts() {
        for count in [0, 1, 7, 8, 9, 16, 32, 33] {
            #expect(RandomBytes.draw(count).count == count)
        }
        // 32 bytes repeated, or all zero, would be a broken source (a chance of 2^-256 otherwise).
        let first = RandomBytes.draw(32)
        let second = RandomBytes.draw(32)
        #expect(first != second)
        #expect(first.contains { $0 != 0 })
        // A fresh draw for every eight bytes: the four words of 32 bytes all differ.
        let words = (0..<4).map { Array(first[($0 * 8)..<($0 * 8 + 8)]) }
        #expect(Set(words).count == 4)
        // Every byte position varies across draws: no position left unfilled by the eight-byte steps.
        let draws = (0..<64).map { _ in RandomBytes.draw(13) }
        for position in 0..<13 {
            #expect(Set(draws.map { $0[position] }).count > 1)
        }
    }
}
