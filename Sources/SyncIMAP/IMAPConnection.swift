import NIOCore
import NIOPosix
import SyncHTTP
public import NIOSSL

/// One connection to an IMAP server: the commands Anchorage needs, one at a time.
///
/// ```swift
/// let imap = try await IMAPConnection.connect(host: "127.0.0.1", port: 1143)
/// try await imap.login(user: "ada", password: "secret")
/// try await imap.enable(["QRESYNC"])
/// let notes = try await imap.select("Notes")
/// let fetched = try await imap.uidFetch(IMAPSequenceSet([1...UInt32.max]), items: "(UID FLAGS BODY.PEEK[])")
/// try await imap.logout()
/// ```
///
/// Untagged responses that arrive during any command (`EXISTS`, `VANISHED`,
/// `FETCH`, `HIGHESTMODSEQ`) update ``selected`` and come back in the
/// command's result. Strings are sent as atoms, quoted strings or literals as
/// they need, literals as `{n+}` when the server has LITERAL+ and otherwise
/// after its continuation request. A `NO` or `BAD` answer throws an
/// ``IMAPError`` that quotes it.
public actor IMAPConnection {
    /// Limits and timeouts.
    public struct Configuration: Sendable {
        /// The largest responses accepted.
        public var limits: IMAPResponseFramer.Limits
        /// How long a command may take before the connection is given up.
        public var commandTimeout: Duration
        /// How long connecting (and the greeting) may take.
        public var connectTimeout: Duration
        /// The TLS settings for ``IMAPSecurity/tls`` and STARTTLS (the system's trust roots by default).
        public var tls: TLSConfiguration?

        /// Makes a configuration.
        public init(
            limits: IMAPResponseFramer.Limits = .init(), commandTimeout: Duration = .seconds(60),
            connectTimeout: Duration = .seconds(15), tls: TLSConfiguration? = nil
        ) {
            self.limits = limits
            self.commandTimeout = commandTimeout
            self.connectTimeout = connectTimeout
            self.tls = tls
        }
    }

    private let channel: any Channel
    private let inbox: IMAPInbox
    private let host: String
    /// Limits and timeouts.
    public let configuration: Configuration
    /// The server's capabilities, upper-cased, as last announced.
    public private(set) var capabilities: Set<String> = []
    /// The selected mailbox, or `nil`.
    public private(set) var selected: IMAPSelectedMailbox?
    /// Whether the connection runs inside TLS.
    public private(set) var isSecure: Bool
    private var nextTag = 0
    private var closed = false

    private init(channel: any Channel, inbox: IMAPInbox, host: String, configuration: Configuration, isSecure: Bool) {
        self.channel = channel
        self.inbox = inbox
        self.host = host
        self.configuration = configuration
        self.isSecure = isSecure
    }

    /// Connects and reads the greeting (and, with STARTTLS, upgrades the connection).
    /// - Throws: ``IMAPError`` when the server cannot be reached, greets with BYE, or cannot give the security asked for.
    public static func connect(
        host: String, port: Int, security: IMAPSecurity = .startTLSIfOffered, configuration: Configuration = Configuration()
    ) async throws -> IMAPConnection {
        let inbox = IMAPInbox()
        let sslContext: NIOSSLContext?
        do {
            sslContext = security == .none ? nil : try NIOSSLContext(configuration: configuration.tls ?? .makeClientConfiguration())
        } catch {
            throw IMAPError(.tlsFailed, "cannot set up TLS for \(host): \(error)")
        }
        let serverName = Self.isIPAddress(host) ? nil : host
        let limits = configuration.limits
        let channel: any Channel
        do {
            channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .connectTimeout(.nanoseconds(Int64(configuration.connectTimeout.components.seconds) * 1_000_000_000))
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        if security == .tls, let sslContext {
                            try channel.pipeline.syncOperations.addHandler(try NIOSSLClientHandler(context: sslContext, serverHostname: serverName))
                        }
                        try channel.pipeline.syncOperations.addHandler(IMAPInboundHandler(inbox: inbox, limits: limits))
                    }
                }
                .connect(host: host, port: port).get()
        } catch {
            throw IMAPError(
                .connectionFailed,
                ConnectionFailure.describe(error, host: host, port: port) ?? "cannot connect to the IMAP server \(host):\(port): \(error)")
        }
        let connection = IMAPConnection(channel: channel, inbox: inbox, host: host, configuration: configuration, isSecure: security == .tls)
        do {
            try await connection.greet()
            if security == .startTLS || security == .startTLSIfOffered, let sslContext {
                var offered = await connection.capabilities
                if offered.isEmpty { offered = try await connection.capability() }
                if offered.contains("STARTTLS") {
                    try await connection.startTLS(sslContext, serverName: serverName)
                } else if security == .startTLS {
                    throw IMAPError(.tlsFailed, "the IMAP server \(host):\(port) does not offer STARTTLS")
                }
            }
        } catch {
            await connection.close()
            throw error
        }
        return connection
    }

    private static func isIPAddress(_ host: String) -> Bool {
        host.contains(":") || host.split(separator: ".").count == 4 && host.allSatisfy { $0 == "." || $0.isNumber }
    }

    private func greet() async throws {
        guard let greeting = try await inbox.next(before: .now + configuration.connectTimeout) else {
            throw IMAPError(.connectionFailed, "the IMAP server \(host) sent no greeting within \(configuration.connectTimeout)")
        }
        guard case .untagged(.condition(let status, let code, let text)) = greeting, status == .ok || status == .preauth else {
            throw IMAPError(.connectionFailed, "the IMAP server \(host) refused the connection: \(greeting)")
        }
        if case .capability(let list) = code { capabilities = Set(list.map { $0.uppercased() }) }
        _ = text
    }

    private func startTLS(_ context: NIOSSLContext, serverName: String?) async throws {
        _ = try await run("STARTTLS")
        let channel = self.channel
        do {
            try await channel.eventLoop.submit {
                try channel.pipeline.syncOperations.addHandler(try NIOSSLClientHandler(context: context, serverHostname: serverName), position: .first)
            }.get()
        } catch {
            throw IMAPError(.tlsFailed, "STARTTLS with \(host) failed: \(error)")
        }
        isSecure = true
        capabilities = []
        _ = try await capability()
    }

    // MARK: Commands

    /// `CAPABILITY`.
    @discardableResult
    public func capability() async throws -> Set<String> {
        let result = try await run("CAPABILITY")
        for case .capability(let list) in result.untagged { capabilities = Set(list.map { $0.uppercased() }) }
        return capabilities
    }

    /// `LOGIN user password`.
    public func login(user: String, password: String) async throws {
        let result = try await run(.text("LOGIN "), .string(user), .text(" "), .string(password))
        try await takeCapabilities(after: result)
    }

    /// `AUTHENTICATE PLAIN`, with the initial response when the server has SASL-IR.
    public func authenticatePlain(user: String, password: String) async throws {
        let token = Base64.encode(Array(("\0" + user + "\0" + password).utf8))
        let result: IMAPCommandResult
        if capabilities.contains("SASL-IR") {
            result = try await run(.text("AUTHENTICATE PLAIN " + token))
        } else {
            result = try await run(.text("AUTHENTICATE PLAIN"), .continuation(token))
        }
        try await takeCapabilities(after: result)
    }

    private func takeCapabilities(after result: IMAPCommandResult) async throws {
        if case .capability(let list) = result.code {
            capabilities = Set(list.map { $0.uppercased() })
        } else {
            try await capability()
        }
    }

    /// `ENABLE …`; returns what the server enabled.
    @discardableResult
    public func enable(_ extensions: [String]) async throws -> [String] {
        let result = try await run(.text("ENABLE " + extensions.joined(separator: " ")))
        return result.untagged.flatMap { (response) -> [String] in if case .enabled(let list) = response { list } else { [] } }
    }

    /// `LIST reference pattern`, with `RETURN (STATUS (…))` when `status` names items (LIST-STATUS).
    public func list(reference: String = "", pattern: String = "*", status: [String] = []) async throws -> [IMAPMailboxListing] {
        var parts: [IMAPCommandPart] = [.text("LIST "), .string(reference), .text(" "), .string(ModifiedUTF7.encode(pattern))]
        if !status.isEmpty { parts.append(.text(" RETURN (STATUS (" + status.joined(separator: " ") + "))")) }
        let result = try await run(parts)
        var listings: [IMAPMailboxListing] = []
        var statuses: [String: [String: UInt64]] = [:]
        for response in result.untagged {
            switch response {
            case .list(let entry): listings.append(IMAPMailboxListing(entry: entry, status: [:]))
            case .status(let name, let items): statuses[name, default: [:]].merge(items) { $1 }
            default: break
            }
        }
        return listings.map { listing in
            var listing = listing
            listing.status = statuses[listing.entry.name] ?? [:]
            return listing
        }
    }

    /// `STATUS mailbox (items)`.
    public func status(_ mailbox: String, items: [String]) async throws -> [String: UInt64] {
        let result = try await run(.text("STATUS "), .mailbox(mailbox), .text(" (" + items.joined(separator: " ") + ")"))
        var status: [String: UInt64] = [:]
        for case .status(_, let values) in result.untagged { status.merge(values) { $1 } }
        return status
    }

    /// `CREATE mailbox`; a mailbox that already exists is no error when `ignoringExisting`.
    public func create(_ mailbox: String, ignoringExisting: Bool = true) async throws {
        do {
            _ = try await run(.text("CREATE "), .mailbox(mailbox))
        } catch let error as IMAPError where ignoringExisting && error.message.contains("[ALREADYEXISTS]") {}
    }

    /// `DELETE mailbox`.
    public func delete(_ mailbox: String) async throws {
        _ = try await run(.text("DELETE "), .mailbox(mailbox))
    }

    /// `SELECT` (or `EXAMINE` when `readOnly`) with `(QRESYNC (uidvalidity modseq [known-uids]))` when given.
    /// - Returns: What the server reported changed since `qresync` (empty without it).
    @discardableResult
    public func select(
        _ mailbox: String, readOnly: Bool = false, qresync: (uidValidity: UInt32, modSeq: UInt64, knownUIDs: IMAPSequenceSet?)? = nil
    ) async throws -> IMAPChanges {
        selected = IMAPSelectedMailbox(name: mailbox, isReadOnly: readOnly)
        var parts: [IMAPCommandPart] = [.text(readOnly ? "EXAMINE " : "SELECT "), .mailbox(mailbox)]
        if let qresync {
            var arguments = "\(qresync.uidValidity) \(qresync.modSeq)"
            if let known = qresync.knownUIDs, !known.isEmpty { arguments += " \(known)" }
            parts.append(.text(" (QRESYNC (\(arguments)))"))
        }
        do {
            let result = try await run(parts)
            return Self.changes(in: result.untagged)
        } catch {
            selected = nil
            throw error
        }
    }

    /// `UID FETCH set items [(CHANGEDSINCE modseq [VANISHED])]`.
    /// - Parameters:
    ///   - items: The items, parenthesized: `(UID FLAGS MODSEQ BODY.PEEK[])`.
    public func uidFetch(
        _ uids: IMAPSequenceSet, items: String, changedSince: UInt64? = nil, vanished: Bool = false
    ) async throws -> IMAPChanges {
        var command = "UID FETCH \(uids) \(items)"
        if let changedSince { command += " (CHANGEDSINCE \(changedSince)\(vanished ? " VANISHED" : ""))" }
        let result = try await run(.text(command))
        return Self.changes(in: result.untagged)
    }

    /// `UID SEARCH criteria` (the criteria as IMAP text, strings already quoted).
    public func uidSearch(_ criteria: String) async throws -> [UInt32] {
        let result = try await run(.text("UID SEARCH " + criteria))
        return result.untagged.flatMap { (response) -> [UInt32] in if case .search(let uids, _) = response { uids } else { [] } }
    }

    /// `APPEND mailbox (flags) {message}`.
    /// - Returns: The new message's UIDVALIDITY and UID when the server says (UIDPLUS).
    @discardableResult
    public func append(_ mailbox: String, flags: [String] = [], message: [UInt8]) async throws -> (uidValidity: UInt32, uid: UInt32)? {
        var parts: [IMAPCommandPart] = [.text("APPEND "), .mailbox(mailbox)]
        if !flags.isEmpty { parts.append(.text(" (" + flags.joined(separator: " ") + ")")) }
        parts += [.text(" "), .literal(message)]
        let result = try await run(parts)
        if case .appendUID(let validity, let uids) = result.code, let uid = uids.numbers(limit: 1).first { return (validity, uid) }
        return nil
    }

    /// `UID STORE set [(UNCHANGEDSINCE m)] +FLAGS.SILENT (flags)` (`operation` is `+FLAGS`, `-FLAGS` or `FLAGS`).
    /// - Returns: The UIDs not changed because they changed after `unchangedSince` (`MODIFIED`).
    @discardableResult
    public func uidStore(
        _ uids: IMAPSequenceSet, _ operation: String, flags: [String], silent: Bool = true, unchangedSince: UInt64? = nil
    ) async throws -> IMAPSequenceSet {
        var command = "UID STORE \(uids)"
        if let unchangedSince { command += " (UNCHANGEDSINCE \(unchangedSince))" }
        command += " \(operation)\(silent ? ".SILENT" : "") (\(flags.joined(separator: " ")))"
        let result = try await run(.text(command))
        if case .modified(let set) = result.code { return set }
        return IMAPSequenceSet([ClosedRange<UInt32>]())
    }

    /// `UID EXPUNGE set`: removes those of the messages flagged `\Deleted`.
    public func uidExpunge(_ uids: IMAPSequenceSet) async throws {
        _ = try await run(.text("UID EXPUNGE \(uids)"))
    }

    /// `SETMETADATA mailbox (entry value …)`; a `nil` value removes the entry.
    public func setMetadata(_ mailbox: String, _ entries: [String: String?]) async throws {
        var parts: [IMAPCommandPart] = [.text("SETMETADATA "), .mailbox(mailbox), .text(" (")]
        for (index, pair) in entries.sorted(by: { $0.key < $1.key }).enumerated() {
            if index > 0 { parts.append(.text(" ")) }
            parts += [.string(pair.key), .text(" ")]
            parts.append(pair.value.map { .string($0) } ?? .text("NIL"))
        }
        parts.append(.text(")"))
        _ = try await run(parts)
    }

    /// `GETMETADATA (DEPTH infinity) mailbox (entries)`: every entry under those named.
    public func getMetadata(_ mailbox: String, _ entries: [String]) async throws -> [String: String] {
        var parts: [IMAPCommandPart] = [.text("GETMETADATA (DEPTH infinity) "), .mailbox(mailbox), .text(" (")]
        for (index, entry) in entries.enumerated() {
            if index > 0 { parts.append(.text(" ")) }
            parts.append(.string(entry))
        }
        parts.append(.text(")"))
        let result = try await run(parts)
        var values: [String: String] = [:]
        for case .metadata(_, let found) in result.untagged {
            for (entry, value) in found { if let value { values[entry] = value } }
        }
        return values
    }

    /// `IDLE`: hands each untagged response to `stop` until it returns `true` or `duration` passes, then `DONE`.
    /// - Returns: The untagged responses received.
    public func idle(for duration: Duration, stop: @Sendable (IMAPUntagged) -> Bool = { _ in false }) async throws -> [IMAPUntagged] {
        try checkOpen()
        let tag = newTag()
        try await write(Array("\(tag) IDLE\r\n".utf8))
        var received: [IMAPUntagged] = []
        var deadline = ContinuousClock.now + configuration.commandTimeout
        var idling = false
        while true {
            guard let response = try await inbox.next(before: deadline) else {
                guard idling else { throw await fail("the IMAP server did not answer IDLE within \(configuration.commandTimeout)") }
                try await write(Array("DONE\r\n".utf8))
                idling = false
                deadline = .now + configuration.commandTimeout
                continue
            }
            switch response {
            case .continuation:
                idling = true
                deadline = .now + duration
            case .untagged(let untagged):
                apply(untagged)
                received.append(untagged)
                if idling && stop(untagged) {
                    try await write(Array("DONE\r\n".utf8))
                    idling = false
                    deadline = .now + configuration.commandTimeout
                }
                if case .condition(.bye, _, let text) = untagged { throw await fail("the IMAP server said BYE: \(text)") }
            case .tagged(let got, let status, let code, let text):
                guard got == tag else { continue }
                guard status == .ok else { throw IMAPError(.commandFailed, "IDLE failed: \(status.rawValue) \(Self.show(code))\(text)") }
                return received
            }
        }
    }

    /// `LOGOUT`, then closes the connection.
    public func logout() async {
        if !closed { _ = try? await run("LOGOUT") }
        await close()
    }

    /// Closes the connection without a word to the server.
    public func close() async {
        closed = true
        try? await channel.close()
    }

    // MARK: Running a command

    /// Runs a command given as text.
    public func run(_ text: String) async throws -> IMAPCommandResult { try await run([.text(text)]) }

    /// Runs a command made of parts.
    public func run(_ parts: IMAPCommandPart...) async throws -> IMAPCommandResult { try await run(parts) }

    /// Runs a command made of parts: sends it (waiting for the server's `+` before each synchronizing
    /// literal), gathers the untagged responses, and returns at its tagged answer.
    /// - Throws: ``IMAPError`` for a `NO` or `BAD` answer, a timeout, or a lost connection.
    public func run(_ parts: [IMAPCommandPart]) async throws -> IMAPCommandResult {
        try checkOpen()
        let tag = newTag()
        let name = Self.commandName(parts)
        var chunks: [[UInt8]] = [Array((tag + " ").utf8)]
        var continuationPayloads: [[UInt8]] = []
        let literalPlus = capabilities.contains("LITERAL+")
        for part in parts {
            switch part {
            case .text(let text): chunks[chunks.count - 1] += Array(text.utf8)
            case .string(let text): Self.appendAString(Array(text.utf8), literalPlus: literalPlus, to: &chunks)
            case .mailbox(let mailbox): Self.appendAString(Array(ModifiedUTF7.encode(mailbox).utf8), literalPlus: literalPlus, to: &chunks)
            case .literal(let bytes): Self.appendLiteral(bytes, literalPlus: literalPlus, to: &chunks)
            case .continuation(let text): continuationPayloads.append(Array((text + "\r\n").utf8))
            }
        }
        chunks[chunks.count - 1] += [13, 10]
        try await write(chunks[0])
        var nextChunk = 1
        var untagged: [IMAPUntagged] = []
        let deadline = ContinuousClock.now + configuration.commandTimeout
        while true {
            guard let response = try await inbox.next(before: deadline) else {
                throw await fail("the IMAP server did not answer \(name) within \(configuration.commandTimeout)")
            }
            switch response {
            case .continuation(let text):
                if nextChunk < chunks.count {
                    try await write(chunks[nextChunk])
                    nextChunk += 1
                } else if !continuationPayloads.isEmpty {
                    try await write(continuationPayloads.removeFirst())
                } else {
                    // Nothing left to send: cancel (an AUTHENTICATE challenge this client does not answer).
                    try await write(Array("*\r\n".utf8))
                    _ = text
                }
            case .untagged(let response):
                apply(response)
                untagged.append(response)
                if case .condition(.bye, _, let text) = response, name != "LOGOUT" {
                    throw await fail("the IMAP server said BYE during \(name): \(text)")
                }
            case .tagged(let got, let status, let code, let text):
                guard got == tag else { continue }
                if case .capability(let list) = code { capabilities = Set(list.map { $0.uppercased() }) }
                guard status == .ok else {
                    throw IMAPError(.commandFailed, "IMAP \(name) failed: \(status.rawValue) \(Self.show(code))\(text)")
                }
                return IMAPCommandResult(untagged: untagged, code: code, text: text)
            }
        }
    }

    private func checkOpen() throws {
        guard !closed else { throw IMAPError(.connectionLost, "the IMAP connection to \(host) is closed") }
    }

    private func newTag() -> String {
        nextTag += 1
        return "A\(nextTag)"
    }

    private func write(_ bytes: [UInt8]) async throws {
        do {
            try await channel.writeAndFlush(channel.allocator.buffer(bytes: bytes)).get()
        } catch {
            throw await fail("cannot write to the IMAP server \(host): \(error)")
        }
    }

    /// Closes the connection and returns the error to throw.
    private func fail(_ message: String) async -> IMAPError {
        await close()
        return IMAPError(.connectionLost, message)
    }

    /// Takes what an untagged response says about the selected mailbox.
    private func apply(_ response: IMAPUntagged) {
        guard selected != nil else { return }
        switch response {
        case .exists(let count): selected?.exists = count
        case .condition(_, .uidValidity(let value), _): selected?.uidValidity = value
        case .condition(_, .uidNext(let value), _): selected?.uidNext = value
        case .condition(_, .highestModSeq(let value), _): selected?.highestModSeq = value
        case .condition(_, .noModSeq, _): selected?.highestModSeq = nil
        case .condition(_, .readOnly, _): selected?.isReadOnly = true
        case .fetch(let fetch):
            if let modSeq = fetch.modSeq, let highest = selected?.highestModSeq, modSeq > highest { selected?.highestModSeq = modSeq }
        default: break
        }
    }

    private static func changes(in responses: [IMAPUntagged]) -> IMAPChanges {
        var changes = IMAPChanges()
        var vanished: [ClosedRange<UInt32>] = []
        for response in responses {
            switch response {
            case .vanished(_, let set): vanished += set.ranges
            case .fetch(let fetch): changes.fetches.append(fetch)
            default: break
            }
        }
        changes.vanished = IMAPSequenceSet(vanished)
        return changes
    }

    private static func show(_ code: IMAPResponseCode?) -> String {
        guard let code else { return "" }
        if case .other(let name, let text) = code { return "[\(name)\(text.map { " " + $0 } ?? "")] " }
        return ""
    }

    private static func commandName(_ parts: [IMAPCommandPart]) -> String {
        guard case .text(let text) = parts.first else { return "command" }
        let words = text.split(separator: " ")
        if words.first?.uppercased() == "UID", words.count > 1 { return "UID " + words[1] }
        return words.first.map(String.init) ?? "command"
    }

    /// An atom, a quoted string, or a literal (which ends the current chunk when synchronizing).
    private static func appendAString(_ bytes: [UInt8], literalPlus: Bool, to chunks: inout [[UInt8]]) {
        let special: Set<UInt8> = [UInt8(ascii: "%"), UInt8(ascii: "*"), UInt8(ascii: "\\")]
        if !bytes.isEmpty && bytes.count < 1_000 && bytes.allSatisfy({ IMAPParser.Cursor.isAtomByte($0) && !special.contains($0) }) {
            chunks[chunks.count - 1] += bytes
        } else if bytes.count < 1_000 && bytes.allSatisfy({ $0 >= 32 && $0 < 127 }) {
            var quoted: [UInt8] = [UInt8(ascii: "\"")]
            for byte in bytes {
                if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") { quoted.append(UInt8(ascii: "\\")) }
                quoted.append(byte)
            }
            chunks[chunks.count - 1] += quoted + [UInt8(ascii: "\"")]
        } else {
            appendLiteral(bytes, literalPlus: literalPlus, to: &chunks)
        }
    }

    /// A literal: `{n+}` and the bytes at once with LITERAL+, else `{n}` ending the chunk (sent after the server's `+`).
    private static func appendLiteral(_ bytes: [UInt8], literalPlus: Bool, to chunks: inout [[UInt8]]) {
        if literalPlus {
            chunks[chunks.count - 1] += Array("{\(bytes.count)+}\r\n".utf8) + bytes
        } else {
            chunks[chunks.count - 1] += Array("{\(bytes.count)}\r\n".utf8)
            chunks.append(bytes)
        }
    }
}
