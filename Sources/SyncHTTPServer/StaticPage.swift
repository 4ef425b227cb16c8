/// A fixed file a server answers `GET` and `HEAD` for without credentials — the operator console's
/// page, script and style sheet. It must hold no data: whatever it shows, it fetches with credentials.
///
/// Every answer carries the page's ``contentSecurityPolicy``, `X-Content-Type-Options: nosniff`,
/// `X-Frame-Options: DENY`, `Referrer-Policy: no-referrer` and `Cache-Control: no-cache` (the
/// browser asks again each time, so a new server version's page is seen at once).
///
/// ```swift
/// let page = StaticPage(path: "/console", contentType: "text/html; charset=utf-8", body: html)
/// let server = HTTPSyncServer(service: router, authenticator: users, pages: [page])
/// ```
public struct StaticPage: Sendable, Hashable {
    /// The policy pages get unless they say otherwise: nothing but the server's own scripts,
    /// style sheets, images and API; no inline script or style, no frames, no forms posted anywhere.
    public static let strictPolicy =
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
        + "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

    /// The path the page answers, without a query (`/console/console.js`).
    public var path: String
    /// The page's media type, such as `text/html; charset=utf-8`.
    public var contentType: String
    /// The page's bytes.
    public var body: [UInt8]
    /// The `Content-Security-Policy` sent with it.
    public var contentSecurityPolicy: String

    /// Makes a page.
    public init(path: String, contentType: String, body: [UInt8], contentSecurityPolicy: String = Self.strictPolicy) {
        self.path = path
        self.contentType = contentType
        self.body = body
        self.contentSecurityPolicy = contentSecurityPolicy
    }
}
