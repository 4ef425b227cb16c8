import FoundationEssentials
import SyncCore

/// Reads and writes the HTTP `Authorization` header as ``Credentials``.
///
/// `Basic base64(user:password)` is ``Credentials/basic(username:password:)``
/// and `Bearer <token>` is ``Credentials/bearer(_:)``; the scheme name is
/// case-insensitive. Anything else — another scheme, bad base64, a Basic value
/// without a colon, text that is not UTF-8 — reads as no credentials, so the
/// request is answered 401 rather than 400.
///
/// ```swift
/// AuthorizationHeader.credentials(from: "Basic YWRhOnB3")  // .basic(username: "ada", password: "pw")
/// AuthorizationHeader.value(for: .bearer("t0k3n"))         // "Bearer t0k3n"
/// ```
public enum AuthorizationHeader {
    /// The longest header value read; longer values read as no credentials.
    public static let maxLength = 16 * 1024

    /// The credentials a header value carries, or `nil` when it carries none that can be read.
    public static func credentials(from headerValue: String?) -> Credentials? {
        guard let headerValue, headerValue.utf8.count <= maxLength else { return nil }
        let trimmed = headerValue.trimmedOfHTTPWhitespace
        guard let space = trimmed.firstIndex(of: " ") else { return nil }
        let scheme = trimmed[..<space].lowercased()
        let parameter = trimmed[trimmed.index(after: space)...].trimmedOfHTTPWhitespace
        guard !parameter.isEmpty else { return nil }
        switch scheme {
        case "basic":
            guard let decoded = Data(base64Encoded: parameter),
                let text = String(validating: decoded, as: UTF8.self),
                let colon = text.firstIndex(of: ":")
            else { return nil }
            return .basic(username: String(text[..<colon]), password: String(text[text.index(after: colon)...]))
        case "bearer":
            return .bearer(parameter)
        default:
            return nil
        }
    }

    /// The header value that presents `credentials`.
    public static func value(for credentials: Credentials) -> String {
        switch credentials {
        case .basic(let username, let password):
            "Basic " + Data("\(username):\(password)".utf8).base64EncodedString()
        case .bearer(let token):
            "Bearer " + token
        }
    }
}
