#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif
import SyncCore
import SyncIMAP

/// A note, as an application sees it.
public struct Note: Sendable, Hashable, Identifiable {
    /// The note's stable id (`X-Universally-Unique-Identifier`), the same in every message that holds a version of it.
    public var id: String
    /// The title (the message's subject).
    public var title: String
    /// The text, HTML or plain as ``isHTML`` says.
    public var body: String
    /// Whether ``body`` is HTML.
    public var isHTML: Bool
    /// The message flags and keywords (`\Flagged`, `$Pinned`), without `\Recent` and `\Deleted`.
    public var flags: [String]
    /// When the note was made.
    public var created: Date
    /// When this version was written.
    public var modified: Date

    /// Makes a note.
    public init(
        id: String = UUID().uuidString, title: String, body: String, isHTML: Bool = false, flags: [String] = [],
        created: Date = Date(), modified: Date? = nil
    ) {
        self.id = id
        self.title = title
        self.body = body
        self.isHTML = isHTML
        self.flags = flags
        self.created = created
        self.modified = modified ?? created
    }
}

/// Notes as mail messages, the way mail-based note applications keep them: one message per
/// version of a note, `X-Uniform-Type-Identifier: com.apple.mail-note`, the note's id in
/// `X-Universally-Unique-Identifier`, the title as the subject, the text as a `text/html` or
/// `text/plain` body.
public enum NoteMessage {
    /// The message of a note.
    /// - Parameters:
    ///   - from: The address in `From:`.
    ///   - device: The writing device, kept in `X-Anchorage-Device` (a version's author).
    public static func encode(_ note: Note, from: String, device: String) -> [UInt8] {
        var lines = [
            "From: " + headerSafe(from),
            "Date: " + rfc5322(note.modified),
            "Subject: " + encodedWord(note.title),
            "Message-ID: <" + UUID().uuidString.lowercased() + "@anchorage>",
            "MIME-Version: 1.0",
            "X-Uniform-Type-Identifier: com.apple.mail-note",
            "X-Universally-Unique-Identifier: " + headerSafe(note.id),
            "X-Mail-Created-Date: " + rfc5322(note.created),
            "X-Anchorage-Modified: " + String(milliseconds(note.modified)),
            "X-Anchorage-Created: " + String(milliseconds(note.created)),
            "X-Anchorage-Device: " + headerSafe(device),
            "Content-Type: " + (note.isHTML ? "text/html" : "text/plain") + "; charset=utf-8",
            "Content-Transfer-Encoding: base64",
            "",
        ]
        // Text travels in MIME's canonical form, CRLF line breaks; a note's text has LF ones.
        let canonical = note.body.replacing("\r\n", with: "\n").replacing("\n", with: "\r\n")
        let encoded = Array(Base64.encode(Array(canonical.utf8)).utf8)
        var index = 0
        while index < encoded.count {
            lines.append(String(decoding: encoded[index..<min(index + 76, encoded.count)], as: UTF8.self))
            index += 76
        }
        return Array((lines.joined(separator: "\r\n") + "\r\n").utf8)
    }

    /// A decoded message: the note, and the device that wrote it when it says.
    public struct Decoded: Sendable, Hashable {
        /// The note (its flags empty: they are the message's, not its text's).
        public var note: Note
        /// `X-Anchorage-Device`, when present.
        public var device: String?
    }

    /// Reads a message; `nil` when it holds no note (no `X-Universally-Unique-Identifier`).
    public static func decode(_ message: [UInt8]) -> Decoded? {
        let (headers, body) = split(message)
        guard let id = headers["x-universally-unique-identifier"], !id.isEmpty else { return nil }
        let title = decodeWords(headers["subject"] ?? "")
        let contentType = (headers["content-type"] ?? "text/plain").lowercased()
        let encoding = (headers["content-transfer-encoding"] ?? "7bit").lowercased()
        let bytes: [UInt8]
        switch encoding {
        case "base64": bytes = Base64.decode(body) ?? body
        case "quoted-printable": bytes = quotedPrintable(body)
        default: bytes = body
        }
        var text = String(decoding: bytes, as: UTF8.self)
        // A body sent as is ends with the message's own line break, which is not the note's.
        if encoding != "base64" && (text.hasSuffix("\r\n") || text.hasSuffix("\n")) { text.removeLast() }
        // Mail's line breaks are CRLF (whoever wrote the message); a note's text has LF ones.
        text = text.replacing("\r\n", with: "\n")
        let modified = headers["x-anchorage-modified"].flatMap(date(milliseconds:))
            ?? headers["date"].flatMap(parseDate) ?? Date(timeIntervalSince1970: 0)
        let created = headers["x-anchorage-created"].flatMap(date(milliseconds:))
            ?? headers["x-mail-created-date"].flatMap(parseDate) ?? modified
        let note = Note(id: id, title: title, body: text, isHTML: contentType.hasPrefix("text/html"), created: created, modified: modified)
        return Decoded(note: note, device: headers["x-anchorage-device"])
    }

    // MARK: Headers

    /// Headers (lower-cased names, unfolded) and the body.
    static func split(_ message: [UInt8]) -> ([String: String], [UInt8]) {
        var headers: [String: String] = [:]
        var index = 0
        var lastName: String?
        while index < message.count {
            var end = message[index...].firstIndex(of: 10) ?? message.count
            let lineEnd = end
            if end > index && message[end - 1] == 13 { end -= 1 }
            let line = message[index..<end]
            index = min(message.count, lineEnd + 1)
            if line.isEmpty { break }
            if let first = line.first, first == 32 || first == 9, let name = lastName {
                headers[name, default: ""] += " " + String(decoding: line, as: UTF8.self).trimmed
                continue
            }
            guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else { continue }
            let name = String(decoding: line[..<colon], as: UTF8.self).lowercased().trimmed
            let value = String(decoding: line[(colon + 1)...], as: UTF8.self).trimmed
            if headers[name] == nil { headers[name] = value }
            lastName = name
        }
        return (headers, Array(message[index...]))
    }

    private static func headerSafe(_ text: String) -> String {
        String(text.unicodeScalars.filter { $0 != "\r" && $0 != "\n" })
    }

    /// The text as is when plain ASCII, else an RFC 2047 encoded word.
    static func encodedWord(_ text: String) -> String {
        let safe = headerSafe(text)
        if safe.utf8.allSatisfy({ $0 >= 32 && $0 < 127 }) && !safe.contains("=?") { return safe }
        return "=?utf-8?B?" + Base64.encode(Array(safe.utf8)) + "?="
    }

    /// Decodes RFC 2047 encoded words (B and Q, UTF-8 and Latin-1 as UTF-8).
    static func decodeWords(_ text: String) -> String {
        guard text.contains("=?") else { return text }
        var result = ""
        var rest = Substring(text)
        while let start = rest.firstRange(of: "=?") {
            let before = rest[..<start.lowerBound]
            let parts = rest[start.upperBound...].split(separator: "?", maxSplits: 3, omittingEmptySubsequences: false)
            guard parts.count == 4, parts[3].hasPrefix("=") else {
                result += rest
                return result
            }
            if !before.allSatisfy({ $0 == " " || $0 == "\t" }) || result.isEmpty { result += before }
            let payload = Array(parts[2].utf8)
            let bytes = parts[1].uppercased() == "B" ? (Base64.decode(payload) ?? payload) : quotedPrintable(payload.map { $0 == UInt8(ascii: "_") ? 32 : $0 })
            result += String(decoding: bytes, as: UTF8.self)
            rest = parts[3].dropFirst()
        }
        return result + rest
    }

    static func quotedPrintable(_ bytes: [UInt8]) -> [UInt8] {
        var result: [UInt8] = []
        var index = 0
        func hex(_ byte: UInt8) -> UInt8? {
            switch byte {
            case 48...57: byte - 48
            case 65...70: byte - 55
            case 97...102: byte - 87
            default: nil
            }
        }
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "=") {
                if index + 2 < bytes.count, let high = hex(bytes[index + 1]), let low = hex(bytes[index + 2]) {
                    result.append(high << 4 | low)
                    index += 3
                    continue
                }
                // A soft line break.
                var next = index + 1
                if next < bytes.count && bytes[next] == 13 { next += 1 }
                if next < bytes.count && bytes[next] == 10 {
                    index = next + 1
                    continue
                }
            }
            result.append(byte)
            index += 1
        }
        return result
    }

    // MARK: Dates

    private static let days = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"]
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    /// The milliseconds since 1970 a message can carry: years 1 to 9999, as in a `Date:` header.
    static let millisecondRange: ClosedRange<Int64> =
        CivilCalendar.headerSeconds.lowerBound * 1_000...CivilCalendar.headerSeconds.upperBound * 1_000 + 999

    /// Milliseconds since 1970 of `date`, rounded, and moved into ``millisecondRange`` when outside it.
    static func milliseconds(_ date: Date) -> Int64 {
        let value = (date.timeIntervalSince1970 * 1_000).rounded()
        guard value.isFinite else { return value > 0 ? millisecondRange.upperBound : millisecondRange.lowerBound }
        return Int64(min(max(value, Double(millisecondRange.lowerBound)), Double(millisecondRange.upperBound)))
    }

    /// The date `text` counts in milliseconds since 1970; `nil` for text that is not such a count in ``millisecondRange``.
    static func date(milliseconds text: String) -> Date? {
        guard let count = Int64(text), millisecondRange.contains(count) else { return nil }
        return Date(timeIntervalSince1970: Double(count) / 1_000)
    }

    /// `Tue, 24 Nov 2026 19:55:37 +0000`; a date outside years 1 to 9999 is written as the nearest of them.
    static func rfc5322(_ date: Date) -> String {
        let count = milliseconds(date)
        let seconds = count >= 0 ? count / 1_000 : (count - 999) / 1_000
        let day = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let time = seconds - day * 86_400
        let (year, month, dayOfMonth) = CivilCalendar.date(fromDays: day)
        func two(_ value: Int64) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let weekday = days[Int(((day % 7) + 7) % 7)]
        return "\(weekday), \(dayOfMonth) \(months[Int(month) - 1]) \(year) \(two(time / 3_600)):\(two(time % 3_600 / 60)):\(two(time % 60)) +0000"
    }

    /// Reads `[Day, ]DD Mon YYYY HH:MM[:SS] ±ZZZZ`; `nil` otherwise.
    static func parseDate(_ text: String) -> Date? {
        var words = text.split(separator: " ").map(String.init)
        if let first = words.first, first.hasSuffix(",") { words.removeFirst() }
        guard words.count >= 4, let day = Int64(words[0]), (1...31).contains(day),
            let monthIndex = months.firstIndex(of: String(words[1].prefix(3)).capitalized),
            let year = Int64(words[2]), CivilCalendar.headerYears.contains(year)
        else { return nil }
        let clock = words[3].split(separator: ":").compactMap { Int64($0) }
        guard clock.count >= 2, clock.allSatisfy({ (0...60).contains($0) }) else { return nil }
        var offset: Int64 = 0
        if words.count > 4, let zone = Int64(words[4].dropFirst()), words[4].count == 5, (0...9_999).contains(zone) {
            offset = (zone / 100 * 3_600 + zone % 100 * 60) * (words[4].hasPrefix("-") ? -1 : 1)
        }
        let days = CivilCalendar.days(year: year, month: Int64(monthIndex + 1), day: day)
        let seconds = days * 86_400 + clock[0] * 3_600 + clock[1] * 60 + (clock.count > 2 ? clock[2] : 0) - offset
        return Date(timeIntervalSince1970: Double(seconds))
    }
}

extension String {
    /// The text without spaces and tabs at either end.
    var trimmed: String {
        let scalars = unicodeScalars
        guard let first = scalars.firstIndex(where: { $0 != " " && $0 != "\t" }),
            let last = scalars.lastIndex(where: { $0 != " " && $0 != "\t" })
        else { return "" }
        return String(scalars[first...last])
    }
}
