import ArgumentParser
import Foundation
import SyncCore
import SyncHTTPClient
import SyncJSON
import SyncIMAP
import SyncMail
import SyncMailPush
import SyncPush

/// `anchorage notes …`: notes kept in an IMAP mailbox, with a local store.
struct Notes: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Notes kept as messages in an IMAP mailbox, synced with a local store.",
        discussion: """
            Every command names the mailbox with --imap imap://USER@HOST:PORT/MAILBOX (imaps:// for TLS \
            from the start; imap:// uses STARTTLS when the server offers it) and reads the password from \
            ANCHORAGE_IMAP_PASSWORD. Changes are saved in the local store (--store) first and sent with a \
            sync, which add, edit and delete run at once; when the server cannot be reached, the change stays \
            in the store and the next sync sends it (exit status 69, with a line saying so). See docs/mail.md.

            Exit status: 0 done; 64 a bad argument or no password; 66 no such note; 69 the IMAP or \
            push server cannot be reached or refused.
            """,
        subcommands: [List.self, Add.self, Edit.self, Delete.self, SyncNotes.self])

    /// The options every notes command takes.
    struct Location: ParsableArguments {
        @Option(help: "The mailbox: imap://USER@HOST:PORT/MAILBOX or imaps://….")
        var imap: String

        @Option(help: "The device's local store: sqlite:PATH or memory.")
        var store = StoreOption(argument: "sqlite:anchorage-notes.sqlite")!

        @Option(help: "This device's name, written into the messages it appends.")
        var device = ProcessInfo.processInfo.hostName

        @Option(help: "Trust the certificate authorities in this PEM file for TLS, instead of the system's.")
        var caFile: String?

        /// The connection's settings: the trust roots of --ca-file.
        var connection: IMAPConnection.Configuration {
            IMAPConnection.Configuration(tls: caFile.map { PushClient.tls(trustingPEMFile: $0) })
        }

        /// The account and mailbox `--imap` names, with the password from the environment.
        func account() throws -> (IMAPAccount, String) {
            guard let url = URL(string: imap), let scheme = url.scheme?.lowercased(), scheme == "imap" || scheme == "imaps",
                let host = url.host, let user = url.user, !user.isEmpty
            else {
                throw failure("--imap must be imap://USER@HOST:PORT/MAILBOX or imaps://…, not \(imap)", code: 64)
            }
            let mailbox = url.path.drop { $0 == "/" }
            guard !mailbox.isEmpty else { throw failure("--imap names no mailbox: add /MAILBOX (for example /Notes)", code: 64) }
            guard let password = ProcessInfo.processInfo.environment["ANCHORAGE_IMAP_PASSWORD"], !password.isEmpty else {
                throw failure("set ANCHORAGE_IMAP_PASSWORD to the password of \(user)@\(host)", code: 64)
            }
            let security: IMAPSecurity = scheme == "imaps" ? .tls : .startTLSIfOffered
            let account = IMAPAccount(
                host: host, port: url.port ?? (scheme == "imaps" ? 993 : 143), user: user.removingPercentEncoding ?? user,
                password: password, security: security)
            return (account, String(mailbox).removingPercentEncoding ?? String(mailbox))
        }

        /// Runs `body` with the mailbox's notes.
        func withNotes<Result: Sendable>(_ body: (NotesMailbox) async throws -> Result) async throws -> Result {
            let (account, mailbox) = try account()
            return try await store.withStore { store in
                let notes = NotesMailbox(account: account, mailbox: mailbox, store: store, device: device, configuration: connection)
                defer { Task { await notes.close() } }
                do {
                    return try await body(notes)
                } catch let error as IMAPError {
                    throw failure(error.message, code: 69)
                }
            }
        }

        /// Makes a change in the local store with `body`, then syncs. The change is saved first: when the
        /// sync fails it is kept and waits for the next sync, and a line says so, calling it `what`
        /// (exit status 69).
        func change(_ what: String, _ body: (NotesMailbox) async throws -> Void) async throws {
            try await withNotes { notes in
                try await body(notes)
                do {
                    print(Notes.line(try await notes.sync()))
                } catch let error as IMAPError {
                    throw failure("\(what) is saved here and waits for the next sync: \(error.message)", code: 69)
                }
            }
        }
    }

    /// One line of a sync report.
    static func line(_ report: NotesSyncReport) -> String {
        var parts = ["pulled \(report.pulled)", "pushed \(report.pushed)"]
        if report.conflicts > 0 { parts.append("\(report.conflicts) conflicts decided") }
        if report.openConflicts > 0 { parts.append("\(report.openConflicts) conflicts open") }
        if report.fullResync { parts.append("read in full") }
        return "synced: " + parts.joined(separator: ", ")
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Print the notes of the local store, one JSON line each.")
        @OptionGroup var location: Location

        func run() async throws {
            try await location.withNotes { notes in
                for note in try await notes.notes() {
                    let object: [String: Any] = ["id": note.id, "title": note.title, "body": note.body, "flags": note.flags]
                    let data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])
                    print(String(decoding: data, as: UTF8.self))
                }
            }
        }
    }

    /// The note `id` of the local store; when this device does not have it yet (another device made it),
    /// after a sync that brings it.
    static func localNote(_ id: String, _ notes: NotesMailbox) async throws -> Note {
        if let note = try await notes.note(id) { return note }
        _ = try await notes.sync()
        guard let note = try await notes.note(id) else { throw failure("there is no note \(id)", code: 66) }
        return note
    }

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Add a note and sync; prints its id (the note is kept when the sync fails).")
        @OptionGroup var location: Location
        @Option(help: "The title.") var title: String
        @Option(help: "The text.") var body = ""
        @Flag(help: "The text is HTML.") var html = false

        func run() async throws {
            let note = Note(title: title, body: body, isHTML: html)
            try await location.change("note \(note.id)") { notes in
                try await notes.save(note)
                print(note.id)
            }
        }
    }

    struct Edit: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Change a note's title or text and sync (the change is kept when the sync fails).")
        @OptionGroup var location: Location
        @Argument(help: "The note's id.") var id: String
        @Option(help: "The new title.") var title: String?
        @Option(help: "The new text.") var body: String?

        func run() async throws {
            try await location.change("the edit of note \(id)") { notes in
                var note = try await Notes.localNote(id, notes)
                if let title { note.title = title }
                if let body { note.body = body }
                note.modified = notes.clock.now()
                try await notes.save(note)
            }
        }
    }

    struct Delete: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Delete a note and sync (the deletion is kept when the sync fails).")
        @OptionGroup var location: Location
        @Argument(help: "The note's id.") var id: String

        func run() async throws {
            try await location.change("the deletion of note \(id)") { notes in
                _ = try await Notes.localNote(id, notes)
                try await notes.delete(id)
            }
        }
    }

    struct SyncNotes: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "sync", abstract: "Sync the mailbox; with --watch, stay and sync on every push notification (or poll).")
        @OptionGroup var location: Location
        @Flag(help: "Stay, and sync each time the mailbox changes, one line per sync, until interrupted.") var watch = false
        @Option(help: "With --watch: the push server (http://HOST:PORT); its account is --push-user, its password ANCHORAGE_PASSWORD.")
        var push: String?
        @Option(help: "With --push: the device's account on the push server.") var pushUser: String?
        @Option(help: "With --watch and no --push: seconds between polls.") var pollInterval = 60

        func run() async throws {
            guard watch else {
                try await location.withNotes { notes in print(Notes.line(try await notes.sync())) }
                return
            }
            guard pollInterval >= 1 else { throw ValidationError("--poll-interval must be at least 1") }
            let (account, mailbox) = try location.account()
            try await location.store.withStore { store in
                let notes = NotesMailbox(
                    account: account, mailbox: mailbox, store: store, device: location.device, configuration: location.connection)
                let sync: @Sendable (String) async throws -> Void = { _ in Sync.say(Notes.line(try await notes.sync())) }
                let daemon: MailDataAccessDaemon
                if let push {
                    guard let server = URL(string: push), let user = pushUser else {
                        throw failure("--push needs an http:// address and --push-user", code: 64)
                    }
                    guard let password = ProcessInfo.processInfo.environment["ANCHORAGE_PASSWORD"], !password.isEmpty else {
                        throw failure("set ANCHORAGE_PASSWORD to the push server password of \(user)", code: 64)
                    }
                    let credentials = Credentials.basic(username: user, password: password)
                    let token = String(location.device.unicodeScalars.filter { $0.properties.isAlphabetic || ("0"..."9").contains($0) || "._:-".unicodeScalars.contains($0) }.prefix(128))
                    daemon = MailDataAccessDaemon(
                        account: account, pushServer: server, pushAccount: user, credentials: credentials, deviceToken: token.isEmpty ? "device" : token,
                        transport: HTTPClientTransport(baseURL: server).with(CredentialsMiddleware(credentials)), codec: JSONCodec(),
                        pushMailboxes: [mailbox], imapConfiguration: location.connection, sync: sync)
                } else {
                    daemon = MailDataAccessDaemon(
                        account: account, pushServer: URL(string: "http://127.0.0.1:1")!, pushAccount: "-", credentials: nil, deviceToken: "device",
                        transport: HTTPClientTransport(baseURL: URL(string: "http://127.0.0.1:1")!), codec: JSONCodec(), pushMailboxes: [],
                        pollMailboxes: [mailbox], pollInterval: .seconds(pollInterval), imapConfiguration: location.connection, sync: sync)
                }
                let events = Task {
                    for await event in daemon.events {
                        switch event {
                        case .registered(let mailbox, _): Sync.say("watching \(mailbox) (push)")
                        case .syncFailed(let mailbox, let message): Sync.say("\(mailbox): sync failed: \(message)")
                        case .mailServerFailed(let message): Sync.say(message)
                        case .synced: continue
                        }
                    }
                }
                defer { events.cancel() }
                try await daemon.run()
            }
        }
    }
}
