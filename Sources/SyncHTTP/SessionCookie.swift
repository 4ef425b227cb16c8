import SyncCore

/// The `ota-session` cookie that carries ``SyncRequest/session`` and
/// ``SyncResponse/session`` over HTTP.
///
/// The session is percent-encoded in the cookie (``PercentEncoding``), so any
/// string survives the trip; the usual session ids — letters, digits, `-`,
/// `_`, `.`, `~` — travel unchanged.
///
/// ```swift
/// SessionCookie.setCookieValue(for: "s-42")               // "ota-session=s-42; Path=/; HttpOnly"
/// SessionCookie.session(fromCookieHeaders: ["a=1; ota-session=s-42"])  // "s-42"
/// ```
public enum SessionCookie {
    /// The cookie's name.
    public static let name = "ota-session"

    /// The session in `Cookie` header values (`a=1; ota-session=xyz`), if any.
    public static func session(fromCookieHeaders headerValues: [String]) -> String? {
        for headerValue in headerValues {
            for pair in headerValue.split(separator: ";") {
                if let value = value(of: pair) { return value }
            }
        }
        return nil
    }

    /// The session a `Set-Cookie` header value sets (`ota-session=xyz; Path=/; HttpOnly`), if it sets this cookie.
    public static func session(fromSetCookieHeader headerValue: String) -> String? {
        guard let pair = headerValue.split(separator: ";", maxSplits: 1).first else { return nil }
        return value(of: pair)
    }

    /// The `Cookie` header value that continues `session`.
    public static func cookieValue(for session: String) -> String {
        "\(name)=\(PercentEncoding.encode(session))"
    }

    /// The `Set-Cookie` header value that starts or continues `session`.
    public static func setCookieValue(for session: String) -> String {
        "\(cookieValue(for: session)); Path=/; HttpOnly"
    }

    private static func value(of pair: Substring) -> String? {
        let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2, parts[0].trimmedOfHTTPWhitespace == name else { return nil }
        var value = parts[1].trimmedOfHTTPWhitespace
        if value.count >= 2, value.hasPrefix("\""), value.hasSuffix("\"") { value = String(value.dropFirst().dropLast()) }
        return PercentEncoding.decode(value)
    }
}
