import Foundation
import SyncCore
import SyncHTTP
import Testing

@Suite("Authorization header and session cookie")
struct HeaderCodingTests {
    @Test("Authorization values read back as the credentials they were made from")
    func authorizationRoundTrip() {
        for credentials: Credentials in [
            .basic(username: "ada", password: "pa:ss wörd"), .basic(username: "ada", password: ""), .bearer("t0k3n"),
        ] {
            #expect(AuthorizationHeader.credentials(from: AuthorizationHeader.value(for: credentials)) == credentials)
        }
        #expect(AuthorizationHeader.value(for: .basic(username: "ada", password: "pw")) == "Basic YWRhOnB3")
        #expect(AuthorizationHeader.credentials(from: "  BEARER   abc  ") == .bearer("abc"))
        #expect(AuthorizationHeader.credentials(from: "basic\tYWRhOnB3") == nil, "the scheme ends at a space")
        #expect(AuthorizationHeader.credentials(from: "bAsIc YWRhOnB3\t") == .basic(username: "ada", password: "pw"))
    }

    @Test("a Basic value that is not UTF-8, or a scheme that only looks like Basic, reads as no credentials")
    func basicMustBeUTF8() {
        let notUTF8 = Data([0x61, 0x3A, 0xFF, 0xFE]).base64EncodedString()  // "a:" and two bytes no UTF-8 text has
        #expect(AuthorizationHeader.credentials(from: "Basic " + notUTF8) == nil)
        #expect(AuthorizationHeader.credentials(from: "Bäsic YWRhOnB3") == nil)
        #expect(AuthorizationHeader.credentials(from: "Basicc YWRhOnB3") == nil)
    }

    @Test(
        "unreadable Authorization values read as no credentials",
        arguments: [nil, "", "Basic", "Basic ", "Basic !!!", "Basic YWRh", "Digest YWRhOnB3", "Bearer", "YWRhOnB3"])
    func unreadableAuthorization(value: String?) {
        #expect(AuthorizationHeader.credentials(from: value) == nil)
    }

    @Test("an Authorization value past the length limit reads as no credentials")
    func overlongAuthorization() {
        let value = "Bearer " + String(repeating: "a", count: AuthorizationHeader.maxLength)
        #expect(AuthorizationHeader.credentials(from: value) == nil)
    }

    @Test("the session cookie survives any text and is found among other cookies")
    func sessionCookie() {
        for session in ["s-42", "with space; and=%", "ünïcode"] {
            let cookie = SessionCookie.cookieValue(for: session)
            #expect(SessionCookie.session(fromCookieHeaders: ["a=1; \(cookie); b=2"]) == session)
            #expect(SessionCookie.session(fromSetCookieHeader: SessionCookie.setCookieValue(for: session)) == session)
        }
        #expect(SessionCookie.session(fromCookieHeaders: ["a=1", "ota-session=\"quoted\""]) == "quoted")
        #expect(SessionCookie.session(fromCookieHeaders: ["ota-sessions=x; other=y"]) == nil)
        #expect(SessionCookie.session(fromSetCookieHeader: "other=1; ota-session=x") == nil)
    }
}
