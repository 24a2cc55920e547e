#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A point in time with millisecond precision, as SAML's `xs:dateTime` values carry it.
public struct SAMLInstant: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// Milliseconds since 1970-01-01T00:00:00Z.
    public var millisecondsSinceEpoch: Int64

    public init(millisecondsSinceEpoch: Int64) {
        self.millisecondsSinceEpoch = millisecondsSinceEpoch
    }

    public static func < (lhs: SAMLInstant, rhs: SAMLInstant) -> Bool {
        lhs.millisecondsSinceEpoch < rhs.millisecondsSinceEpoch
    }

    public static func + (lhs: SAMLInstant, rhs: Duration) -> SAMLInstant {
        SAMLInstant(millisecondsSinceEpoch: lhs.millisecondsSinceEpoch + rhs.milliseconds)
    }

    public static func - (lhs: SAMLInstant, rhs: Duration) -> SAMLInstant {
        SAMLInstant(millisecondsSinceEpoch: lhs.millisecondsSinceEpoch - rhs.milliseconds)
    }

    /// Parses an `xs:dateTime` strictly (`2026-11-21T12:00:00Z`, with an optional fraction and `Z` or
    /// `±hh:mm`). A value without a zone is read as UTC (SAML Core 1.3.3 requires UTC).
    ///
    /// Only real instants: a four-digit year from 0001 with no sign, a day that exists in its month (29
    /// February only in leap years), hours 00-23 (or `24:00:00` with a zero fraction, the start of the next
    /// day, as XML Schema allows), minutes and seconds 00-59 (no leap second), an offset within ±14:00
    /// whose minutes are below 60. Anything else is nil, so that no impossible time is read as a later one.
    public init?(xmlDateTime text: String) {
        // Read in place from the string's UTF-8 (no copy).
        var text = text
        guard let instant = text.withUTF8(Self.init(xmlDateTime:)) else { return nil }
        self = instant
    }

    /// ``init(xmlDateTime:)-(String)`` on UTF-8 bytes, XML whitespace at either end skipped.
    init?(xmlDateTime utf8: UnsafeBufferPointer<UInt8>) {
        guard let milliseconds = Self.millisecondsSinceEpoch(utf8[XMLWhitespace.trimmedRange(utf8)]) else { return nil }
        millisecondsSinceEpoch = milliseconds
    }

    private static func millisecondsSinceEpoch(_ bytes: Slice<UnsafeBufferPointer<UInt8>>) -> Int64? {
        var index = bytes.startIndex
        let end = bytes.endIndex
        func number(_ digits: Int) -> Int? {
            guard end - index >= digits else { return nil }
            var value = 0
            for _ in 0..<digits {
                let byte = bytes[index]
                guard byte >= 0x30, byte <= 0x39 else { return nil }
                value = value * 10 + Int(byte - 0x30)
                index += 1
            }
            return value
        }
        func expect(_ byte: UInt8) -> Bool {
            guard index < end, bytes[index] == byte else { return false }
            index += 1
            return true
        }
        guard let year = number(4), year >= 1, expect(UInt8(ascii: "-")), let month = number(2), expect(UInt8(ascii: "-")),
            let day = number(2), expect(UInt8(ascii: "T")), let hour = number(2), expect(UInt8(ascii: ":")),
            let minute = number(2), expect(UInt8(ascii: ":")), let second = number(2),
            (1...12).contains(month), day >= 1, day <= Self.days(inMonth: month, year: year),
            hour <= 24, minute < 60, second < 60
        else { return nil }
        var milliseconds = 0
        var fractionIsZero = true
        if expect(UInt8(ascii: ".")) {
            var scale = 100
            let start = index
            while index < end, bytes[index] >= 0x30, bytes[index] <= 0x39 {
                milliseconds += Int(bytes[index] - 0x30) * scale
                if bytes[index] != 0x30 { fractionIsZero = false }
                scale /= 10
                index += 1
            }
            guard index > start else { return nil }
        }
        // 24:00:00 is the first instant of the next day; 24 with anything else is not a time.
        if hour == 24, minute != 0 || second != 0 || !fractionIsZero { return nil }
        var offsetMinutes = 0
        if index < end, !expect(UInt8(ascii: "Z")) {
            guard bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") else { return nil }
            let sign = bytes[index] == UInt8(ascii: "-") ? -1 : 1
            index += 1
            guard let hours = number(2), expect(UInt8(ascii: ":")), let minutes = number(2), minutes < 60,
                hours < 14 || (hours == 14 && minutes == 0)
            else { return nil }
            offsetMinutes = sign * (hours * 60 + minutes)
        }
        guard index == end else { return nil }
        let days = Self.daysFromCivil(year: year, month: month, day: day)
        let seconds = Int64(days) * 86_400 + Int64(hour * 3600 + minute * 60 + second) - Int64(offsetMinutes * 60)
        return seconds * 1000 + Int64(milliseconds)
    }

    static func days(inMonth month: Int, year: Int) -> Int {
        switch month {
        case 2: year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// The current time from the system clock.
    public static func now() -> SAMLInstant {
        var time = timespec()
        clock_gettime(CLOCK_REALTIME, &time)
        return SAMLInstant(millisecondsSinceEpoch: Int64(time.tv_sec) * 1000 + Int64(time.tv_nsec) / 1_000_000)
    }

    /// `2026-11-21T12:00:00Z` (with `.mmm` when there are milliseconds).
    public var description: String {
        let milliseconds = Int(((millisecondsSinceEpoch % 1000) + 1000) % 1000)
        let seconds = (millisecondsSinceEpoch - Int64(milliseconds)) / 1000
        let days = Int(seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400)
        let secondOfDay = Int(seconds - Int64(days) * 86_400)
        let (year, month, day) = Self.civil(fromDays: days)
        func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
        var text = "\(year)-\(two(month))-\(two(day))T\(two(secondOfDay / 3600)):\(two(secondOfDay / 60 % 60)):\(two(secondOfDay % 60))"
        if milliseconds != 0 {
            text += "." + String(String(milliseconds + 1000).dropFirst())
        }
        return text + "Z"
    }

    // Howard Hinnant's days-from-civil and civil-from-days (proleptic Gregorian calendar).
    static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    static func civil(fromDays days: Int) -> (Int, Int, Int) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }
}

extension Duration {
    var milliseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1000 + attoseconds / 1_000_000_000_000_000
    }
}
