#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif
public import SyncCore
public import SyncIMAP
public import SyncPush
import Synchronization

/// The device side of mail push: asks the mail server for its mailboxes, registers the ones of
/// interest for push, and syncs exactly the mailbox whose token a notification names.
///
/// ```swift
/// let notes = NotesMailbox(account: account, mailbox: "Notes", store: store, device: "phone-7")
/// let daemon = MailDataAccessDaemon(
///     account: account, pushServer: URL(string: "http://127.0.0.1:8080")!, pushAccount: "ada",
///     credentials: .basic(username: "ada", password: "secret"), deviceToken: "phone-7",
///     transport: transport, codec: JSONCodec(), pushMailboxes: ["Notes"]
/// ) { mailbox in try await notes.sync() }
/// try await daemon.run()                       // until cancelled
/// ```
///
/// The push client (``SyncPush/PushClient``) registers one collection per push mailbox
/// (`mail/<user>@<host>:<port>/<mailbox>`) with the push server and gets a token for each.
/// The daemon then stores the registration where the mail server keeps it, in the mailbox's
/// METADATA: `/private/vendor/vendor.anchorage/push/<deviceToken>` = `account=<pushAccount> device=<deviceToken> token=<token>`
/// (the device's name in the value too, since mail servers may lower-case entry names).
/// On each change of the mailbox the mail server's hook (scripts/dovecot/anchorage-push.lua) posts
/// the mailbox's registrations to the push server (`POST /push/mail`), which notifies the device;
/// the push client hands the token's collection back, and the daemon syncs that mailbox. A retained
/// notification (the device missed some) syncs every push mailbox. Mailboxes without push are
/// polled every ``pollInterval`` with one `LIST … RETURN (STATUS …)`, and synced when their
/// UIDVALIDITY, UIDNEXT, HIGHESTMODSEQ or message count moved.
public final class MailDataAccessDaemon: Sendable {
    /// What the daemon did.
    public enum Event: Sendable, Hashable {
        /// A push mailbox's registration was stored in its METADATA.
        case registered(mailbox: String, token: String)
        /// A mailbox was synced: notified, a retained notification or the first connection (resync), or polled.
        case synced(mailbox: String, reason: PushClient.Reason)
        /// Syncing a mailbox failed; it is synced again at the next notification or poll.
        case syncFailed(mailbox: String, message: String)
        /// Talking to the mail server failed (registering, polling); the daemon goes on.
        case mailServerFailed(message: String)
    }

    /// The mail account.
    public let account: IMAPAccount
    /// The push mailboxes.
    public let pushMailboxes: [String]
    /// The mailboxes polled instead.
    public let pollMailboxes: [String]
    /// How often the polled mailboxes are checked.
    public let pollInterval: Duration
    /// The push client.
    public let push: PushClient
    private let pushAccount: String
    private let deviceToken: String
    private let sleeper: any Clock<Duration>
    private let syncMailbox: @Sendable (String) async throws -> Void
    private let imapConfiguration: IMAPConnection.Configuration
    private let (eventStream, eventContinuation) = AsyncStream<Event>.makeStream(bufferingPolicy: .bufferingNewest(4_096))
    private let registeredTokens = Mutex<[String: String]>([:])
    private let forwarding = Mutex<Task<Void, Never>?>(nil)

    /// Makes a daemon.
    /// - Parameters:
    ///   - account: The mail account.
    ///   - pushServer: The push server's address.
    ///   - pushAccount: The account the device has on the push server, written into the registrations.
    ///   - credentials: The credentials the push stream presents.
    ///   - deviceToken: The device's token (1–128 characters of `A–Z a–z 0–9 . _ : -`).
    ///   - transport: Carries the push registration (with credentials).
    ///   - codec: The codec the registration travels in.
    ///   - pushMailboxes: The mailboxes to register for push.
    ///   - pollMailboxes: The mailboxes to poll instead.
    ///   - pollInterval: How often to poll them.
    ///   - sleeper: The clock polling waits on.
    ///   - pushConfiguration: The push client's configuration.
    ///   - imapConfiguration: How the daemon's own IMAP connections (registrations, polls) are made: the
    ///     TLS configuration that trusts the mail server's certificate, say.
    ///   - sync: Syncs one mailbox.
    public init(
        account: IMAPAccount, pushServer: URL, pushAccount: String, credentials: Credentials?, deviceToken: String,
        transport: any SyncClientTransport, codec: any SyncCodec, pushMailboxes: [String], pollMailboxes: [String] = [],
        pollInterval: Duration = .seconds(300), sleeper: any Clock<Duration> = ContinuousClock(),
        pushConfiguration: PushClient.Configuration = .init(), imapConfiguration: IMAPConnection.Configuration = .init(),
        sync: @escaping @Sendable (String) async throws -> Void
    ) {
        self.account = account
        self.imapConfiguration = imapConfiguration
        self.pushMailboxes = pushMailboxes
        self.pollMailboxes = pollMailboxes
        self.pollInterval = pollInterval
        self.pushAccount = pushAccount
        self.deviceToken = deviceToken
        self.sleeper = sleeper
        self.syncMailbox = sync
        let prefix = Self.collectionPrefix(account)
        let eventContinuation = self.eventContinuation
        self.push = PushClient(
            server: pushServer, credentials: credentials, deviceToken: deviceToken,
            collections: pushMailboxes.map { CollectionID(prefix + $0) }, transport: transport, codec: codec,
            configuration: pushConfiguration
        ) { collection in
            let mailbox = String(collection.rawValue.dropFirst(prefix.count))
            do {
                try await sync(mailbox)
            } catch {
                eventContinuation.yield(.syncFailed(mailbox: mailbox, message: "\(error)"))
                throw error
            }
        }
    }

    /// Makes a daemon whose polling waits on `clock`.
    @available(*, deprecated, renamed: "init(account:pushServer:pushAccount:credentials:deviceToken:transport:codec:pushMailboxes:pollMailboxes:pollInterval:sleeper:pushConfiguration:imapConfiguration:sync:)")
    public convenience init(
        account: IMAPAccount, pushServer: URL, pushAccount: String, credentials: Credentials?, deviceToken: String,
        transport: any SyncClientTransport, codec: any SyncCodec, pushMailboxes: [String], pollMailboxes: [String] = [],
        pollInterval: Duration = .seconds(300), clock: any Clock<Duration>,
        pushConfiguration: PushClient.Configuration = .init(), imapConfiguration: IMAPConnection.Configuration = .init(),
        sync: @escaping @Sendable (String) async throws -> Void
    ) {
        self.init(
            account: account, pushServer: pushServer, pushAccount: pushAccount, credentials: credentials,
            deviceToken: deviceToken, transport: transport, codec: codec, pushMailboxes: pushMailboxes,
            pollMailboxes: pollMailboxes, pollInterval: pollInterval, sleeper: clock, pushConfiguration: pushConfiguration,
            imapConfiguration: imapConfiguration, sync: sync)
    }

    /// The collection of a mailbox on the push server.
    public static func collection(of mailbox: String, in account: IMAPAccount) -> CollectionID {
        CollectionID(collectionPrefix(account) + mailbox)
    }

    private static func collectionPrefix(_ account: IMAPAccount) -> String { "mail/\(account.name)/" }

    /// The METADATA entry a device's registration lives in.
    public static func registrationEntry(deviceToken: String) -> String {
        "/private/vendor/vendor.anchorage/push/" + deviceToken
    }

    /// The METADATA value of a device's registration: the push account, the device's exact name (Dovecot
    /// lower-cases the entry's name) and the token.
    public static func registrationValue(account: String, deviceToken: String, token: String) -> String {
        "account=\(account) device=\(deviceToken) token=\(token)"
    }

    /// What the daemon does from now on.
    public var events: AsyncStream<Event> { eventStream }

    /// Registers, listens for notifications and polls, until cancelled.
    public func run() async throws {
        await withTaskGroup(of: Void.self) { group in
            if !self.pushMailboxes.isEmpty {
                self.startForwarding()
                group.addTask { try? await self.push.run() }
            }
            if !self.pollMailboxes.isEmpty { group.addTask { await self.pollLoop() } }
            await group.next()
            group.cancelAll()
        }
        try Task.checkCancellation()
    }

    /// Starts reading the push client's events, once for the daemon's life: the client has one stream of
    /// events, which a reader that stops would end for good.
    private func startForwarding() {
        forwarding.withLock { task in
            guard task == nil else { return }
            task = Task { [weak self] in
                guard let events = self?.push.events else { return }
                for await event in events {
                    guard let self else { return }
                    await self.forward(event)
                }
            }
        }
    }

    deinit {
        forwarding.withLock { $0?.cancel() }
    }

    /// Writes the registrations into the mailboxes' METADATA when the push server answers a registration,
    /// and reports syncs.
    private func forward(_ event: PushClient.Event) async {
        let prefix = Self.collectionPrefix(account)
        switch event {
        case .registered:
            await storeRegistrations()
        case .synced(let collection, let reason):
            eventContinuation.yield(.synced(mailbox: String(collection.rawValue.dropFirst(prefix.count)), reason: reason))
        default:
            break
        }
    }

    /// Stores each push mailbox's registration in its METADATA, when its token is new.
    private func storeRegistrations() async {
        let tokens = push.tokens
        let due = pushMailboxes.compactMap { mailbox -> (String, String)? in
            guard let token = tokens[Self.collection(of: mailbox, in: account)] else { return nil }
            return registeredTokens.withLock { $0[mailbox] } == token ? nil : (mailbox, token)
        }
        guard !due.isEmpty else { return }
        do {
            let imap = try await account.connect(configuration: imapConfiguration)
            defer { Task { await imap.logout() } }
            for (mailbox, token) in due {
                try await imap.create(mailbox)
                try await imap.setMetadata(
                    mailbox, [Self.registrationEntry(deviceToken: deviceToken): Self.registrationValue(account: pushAccount, deviceToken: deviceToken, token: token)])
                registeredTokens.withLock { $0[mailbox] = token }
                eventContinuation.yield(.registered(mailbox: mailbox, token: token))
            }
        } catch {
            eventContinuation.yield(.mailServerFailed(message: "cannot store the push registrations: \(error)"))
        }
    }

    /// Polls the mailboxes without push: syncs those whose status moved, the first time all of them.
    private func pollLoop() async {
        var seen: [String: [String: UInt64]] = [:]
        var first = true
        while !Task.isCancelled {
            if !first {
                do {
                    try await sleeper.sleep(for: pollInterval)
                } catch {
                    return
                }
            }
            first = false
            do {
                let imap = try await account.connect(configuration: imapConfiguration)
                let listing = try await imap.list(status: ["UIDVALIDITY", "UIDNEXT", "HIGHESTMODSEQ", "MESSAGES"])
                await imap.logout()
                let status = Dictionary(listing.map { ($0.entry.name, $0.status) }, uniquingKeysWith: { first, _ in first })
                for mailbox in pollMailboxes where seen[mailbox] == nil || status[mailbox] != seen[mailbox] {
                    do {
                        try await syncMailbox(mailbox)
                        seen[mailbox] = status[mailbox] ?? [:]
                        eventContinuation.yield(.synced(mailbox: mailbox, reason: .poll))
                    } catch {
                        eventContinuation.yield(.syncFailed(mailbox: mailbox, message: "\(error)"))
                    }
                }
            } catch {
                eventContinuation.yield(.mailServerFailed(message: "cannot poll: \(error)"))
            }
        }
    }
}
