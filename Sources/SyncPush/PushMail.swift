#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import HTTPTypes
import NIOHTTPTypes
import NIOCore
import SyncCore

/// `POST /push/mail`: a mail server's word that mailboxes changed, with the devices registered for each.
///
/// ```json
/// {"user": "ada", "mailboxes": [{"mailbox": "Notes", "uidvalidity": 1795465366, "highestmodseq": 82,
///   "registrations": {"phone-7": "account=ada device=Phone-7 token=5f0c…"}}]}
/// ```
///
/// Each registration names a device (the key) and the account and token the
/// device got from this server for the mailbox; the device stored it in the
/// mailbox's METADATA, and the mail server's hook sends it back. The server
/// notifies that device only when it is registered for that account and the
/// token is one of its own, so a registration written by anyone else names nothing.
///
/// Mail servers may change the key: Dovecot keeps METADATA entry names in
/// lower case. So the value carries the device's exact name too, `device=…`,
/// which the server takes over the key when it is there (a value written by an
/// earlier device has none, and the key stands).
struct MailPushNotice: Decodable, Sendable {
    struct Mailbox: Decodable, Sendable {
        var mailbox: String
        var uidvalidity: UInt64?
        var highestmodseq: UInt64?
        var registrations: [String: String]
    }

    var user: String?
    var mailboxes: [Mailbox]

    /// Reads the JSON body.
    /// - Throws: 400 when it is not a notice.
    init(json: [UInt8]) throws(SyncServiceError) {
        do {
            self = try JSONDecoder().decode(MailPushNotice.self, from: Data(json))
        } catch {
            throw .badRequest("the body must be {\"user\", \"mailboxes\": [{\"mailbox\", \"registrations\": {device: \"account=… token=…\"}}]}")
        }
    }

    /// The devices to notify, with the token each was given: registrations that do not read
    /// `account=… token=…` are left out.
    var deviceTokens: [(PushHub.Key, String)] {
        mailboxes.flatMap { mailbox in
            mailbox.registrations.sorted { $0.key < $1.key }.compactMap { device, value -> (PushHub.Key, String)? in
                var fields: [Substring: Substring] = [:]
                for part in value.split(separator: " ") {
                    guard let equals = part.firstIndex(of: "=") else { continue }
                    fields[part[..<equals]] = part[part.index(after: equals)...]
                }
                guard let account = fields["account"], let token = fields["token"], !account.isEmpty, !token.isEmpty else { return nil }
                let named = fields["device"].map(String.init).flatMap { $0.isEmpty ? nil : $0 } ?? device
                return (PushHub.Key(account: AccountID(String(account)), device: named), String(token))
            }
        }
    }
}

/// Answers `Expect: 100-continue` with `100 Continue` at once, so a client that waits for it
/// before sending its body (Dovecot's Lua HTTP client does, on every request) does not stall.
final class ExpectContinueHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundOut = HTTPResponsePart

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .head(let request) = unwrapInboundIn(data), request.headerFields[.expect]?.lowercased() == "100-continue" {
            context.writeAndFlush(wrapOutboundOut(.head(HTTPResponse(status: .continue))), promise: nil)
        }
        context.fireChannelRead(data)
    }
}
