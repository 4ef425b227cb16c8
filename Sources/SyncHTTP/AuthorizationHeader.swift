#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
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
    ///
    /// Read as UTF-8 bytes: every separator it looks for (space, tab, colon) is ASCII.
    public static func credentials(from headerValue: String?) -> Credentials? {
        guard let headerValue, headerValue.utf8.count <= maxLength else { return nil }
        let value = headerValue.utf8[...].trimmingHTTPWhitespace
        guard let space = value.firstIndex(of: UInt8(ascii: " ")) else { return nil }
        let scheme = value[..<space]
        let parameter = value[value.index(after: space)...].trimmingHTTPWhitespace
        guard !parameter.isEmpty else { return nil }
        if equalsIgnoringASCIICase(scheme, "basic") {
            guard let decoded = Data(base64Encoded: Data(parameter)),
                String(validating: decoded, as: UTF8.self) != nil,
                let colon = decoded.firstIndex(of: UInt8(ascii: ":"))
            else { return nil }
            // A colon is one byte in UTF-8, so both sides of it are valid UTF-8 as well.
            return .basic(
                username: String(decoding: decoded[..<colon], as: UTF8.self),
                password: String(decoding: decoded[decoded.index(after: colon)...], as: UTF8.self))
        }
        if equalsIgnoringASCIICase(scheme, "bearer") {
            return .bearer(String(decoding: parameter, as: UTF8.self))
        }
        return nil
    }

    /// Whether `bytes` spell `lowercaseName` in any case.
    private static func equalsIgnoringASCIICase(_ bytes: Substring.UTF8View, _ lowercaseName: StaticString) -> Bool {
        let name = UnsafeBufferPointer(start: lowercaseName.utf8Start, count: lowercaseName.utf8CodeUnitCount)
        return bytes.count == name.count
            && zip(bytes, name).allSatisfy { byte, letter in
                byte == letter || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) && byte + 32 == letter
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
