import Crypto
#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif
import _CryptoExtras
public import SyncCore
import SyncHTTP

/// The accounts a server accepts, with salted password hashes and hashed bearer tokens.
///
/// One entry a line; `#` starts a comment:
/// ```
/// # account:pbkdf2-sha256:<iterations>:<salt, base64>:<derived key, base64>
/// ada:pbkdf2-sha256:210000:q8x0…==:Yk3v…=
/// # account:token-sha256:<SHA-256 of the token, hex>
/// ada:token-sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08
/// # account:role:operator — may open the operator console
/// ada:role:operator
/// ```
/// Passwords are kept as PBKDF2-HMAC-SHA256 keys with a random 16-byte salt;
/// tokens as their SHA-256 (a token is random and long, so a fast hash is
/// enough). An account may have several passwords and tokens. A role line
/// proves nothing by itself: it grants a right to an account that signs in
/// with one of its passwords or tokens.
///
/// ```swift
/// var users = try UsersFile.load(from: url)
/// users = try users.adding(account: "ada", password: "correct horse")
/// try users.write(to: url)          // atomic: a temporary file renamed over the old one
/// ```
public struct UsersFile: Sendable, Hashable {
    /// One accepted secret of an account.
    public enum Entry: Sendable, Hashable {
        /// A password, as PBKDF2-HMAC-SHA256 with `iterations` rounds over `salt`, giving `key`.
        case password(account: AccountID, iterations: Int, salt: [UInt8], key: [UInt8])
        /// A bearer token, as the SHA-256 of its UTF-8 bytes.
        case token(account: AccountID, sha256: [UInt8])
        /// A right granted to the account (``Role``); it proves nothing by itself.
        case role(account: AccountID, role: Role)

        /// The account the entry proves, or is granted to.
        public var account: AccountID {
            switch self {
            case .password(let account, _, _, _), .token(let account, _), .role(let account, _): account
            }
        }

        /// Whether the entry is a secret the account signs in with (a password or a token).
        public var isSecret: Bool {
            if case .role = self { return false }
            return true
        }
    }

    /// A right an account may hold beyond syncing its own data.
    public enum Role: String, Sendable, Hashable, CaseIterable {
        /// May open the operator console (`anchorage serve --console`), which shows every account's data.
        case `operator`
    }

    /// The entries, in file order.
    public var entries: [Entry]

    /// The iteration count new passwords get (OWASP's 2023 advice for PBKDF2-HMAC-SHA256).
    public static let defaultIterations = 210_000

    /// The iteration counts accepted: enough to be a hash, few enough that one check cannot stall a server.
    public static let iterationRange = 1...10_000_000

    /// Makes a file with `entries`.
    public init(entries: [Entry] = []) {
        self.entries = entries
    }

    /// Reads a users file.
    /// - Throws: ``UsersFileError`` naming the line that cannot be read, or
    ///   saying in one line why the file cannot be read.
    public static func load(from url: URL) throws(UsersFileError) -> UsersFile {
        let bytes: [UInt8]
        do {
            bytes = try AtomicFile.contents(of: url)
        } catch {
            throw UsersFileError(line: 0, error.message)
        }
        return try parse(String(decoding: bytes, as: UTF8.self))
    }

    /// Parses the text of a users file.
    /// - Throws: ``UsersFileError`` naming the first line that cannot be read.
    public static func parse(_ text: String) throws(UsersFileError) -> UsersFile {
        var entries: [Entry] = []
        for (index, rawLine) in text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline).enumerated() {
            let lineText = rawLine.trimmedOfHTTPWhitespace
            if lineText.isEmpty || lineText.hasPrefix("#") { continue }
            let parts = lineText.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
            let lineNumber = index + 1
            guard parts.count >= 3, isValidAccountName(parts[0]) else {
                throw UsersFileError(line: lineNumber, "expected account:kind:…, with an account of letters, digits, '.', '-', '_', '@'")
            }
            let account = AccountID(parts[0])
            switch parts[1] {
            case "pbkdf2-sha256":
                guard parts.count == 5, let iterations = Int(parts[2]), iterationRange.contains(iterations),
                    let salt = Data(base64Encoded: parts[3]), let key = Data(base64Encoded: parts[4]), !key.isEmpty
                else {
                    throw UsersFileError(line: lineNumber, "expected account:pbkdf2-sha256:<iterations>:<salt base64>:<key base64>")
                }
                entries.append(.password(account: account, iterations: iterations, salt: Array(salt), key: Array(key)))
            case "token-sha256":
                guard parts.count == 3, let digest = hexBytes(parts[2]), digest.count == 32 else {
                    throw UsersFileError(line: lineNumber, "expected account:token-sha256:<64 hex digits>")
                }
                entries.append(.token(account: account, sha256: digest))
            case "role":
                guard parts.count == 3, let role = Role(rawValue: parts[2]) else {
                    throw UsersFileError(line: lineNumber, "expected account:role:operator")
                }
                entries.append(.role(account: account, role: role))
            default:
                throw UsersFileError(line: lineNumber, "unknown kind '\(parts[1])': use pbkdf2-sha256, token-sha256 or role")
            }
        }
        return UsersFile(entries: entries)
    }

    /// The file with a password for `account` added (a fresh random salt).
    /// - Parameters:
    ///   - account: The account the password proves.
    ///   - password: The password; only a salted PBKDF2-HMAC-SHA256 key of it is kept.
    ///   - iterations: PBKDF2 rounds; fewer than ``defaultIterations`` only for tests.
    /// - Throws: ``UsersFileError`` for an invalid account name or iteration count, or when key derivation fails.
    public func adding(account: AccountID, password: String, iterations: Int = defaultIterations) throws -> UsersFile {
        guard Self.isValidAccountName(account.rawValue) else {
            throw UsersFileError(line: 0, "'\(account)' is not an account name: use letters, digits, '.', '-', '_', '@'")
        }
        guard Self.iterationRange.contains(iterations) else {
            throw UsersFileError(line: 0, "\(iterations) iterations: use \(Self.iterationRange.lowerBound)…\(Self.iterationRange.upperBound)")
        }
        let salt = (0..<16).map { _ in UInt8.random(in: .min ... .max) }
        let key = try Self.deriveKey(password: password, salt: salt, iterations: iterations)
        var copy = self
        copy.entries.append(.password(account: account, iterations: iterations, salt: salt, key: key))
        return copy
    }

    /// The file with a bearer token for `account` added.
    /// - Throws: ``UsersFileError`` for an invalid account name.
    public func addingToken(account: AccountID, token: String) throws(UsersFileError) -> UsersFile {
        guard Self.isValidAccountName(account.rawValue) else {
            throw UsersFileError(line: 0, "'\(account)' is not an account name: use letters, digits, '.', '-', '_', '@'")
        }
        var copy = self
        copy.entries.append(.token(account: account, sha256: Array(SHA256.hash(data: Array(token.utf8)))))
        return copy
    }

    /// The file with `role` granted to `account` (once, however often it is granted).
    /// - Throws: ``UsersFileError`` for an invalid account name.
    public func granting(_ role: Role, to account: AccountID) throws(UsersFileError) -> UsersFile {
        guard Self.isValidAccountName(account.rawValue) else {
            throw UsersFileError(line: 0, "'\(account)' is not an account name: use letters, digits, '.', '-', '_', '@'")
        }
        guard !has(role, account) else { return self }
        var copy = self
        copy.entries.append(.role(account: account, role: role))
        return copy
    }

    /// The file without `role` for `account`; its passwords and tokens stay.
    public func withdrawing(_ role: Role, from account: AccountID) -> UsersFile {
        UsersFile(entries: entries.filter { $0 != .role(account: account, role: role) })
    }

    /// Whether `account` holds `role`.
    public func has(_ role: Role, _ account: AccountID) -> Bool {
        entries.contains(.role(account: account, role: role))
    }

    /// The file without any entry of `account`.
    public func removing(account: AccountID) -> UsersFile {
        UsersFile(entries: entries.filter { $0.account != account })
    }

    /// The file without the bearer tokens of `account`; its passwords stay.
    public func revokingTokens(of account: AccountID) -> UsersFile {
        UsersFile(entries: entries.filter { entry in
            guard case .token(let owner, _) = entry else { return true }
            return owner != account
        })
    }

    /// The accounts that have at least one entry, sorted (an account with only a role among them).
    public var accounts: [AccountID] { Set(entries.map(\.account)).sorted() }

    /// The file's text.
    public func render() -> String {
        var text = "# Anchorage users: account:pbkdf2-sha256:iterations:salt:key or account:token-sha256:digest\n"
        for entry in entries {
            switch entry {
            case .password(let account, let iterations, let salt, let key):
                text += "\(account):pbkdf2-sha256:\(iterations):\(Data(salt).base64EncodedString()):\(Data(key).base64EncodedString())\n"
            case .token(let account, let digest):
                text += "\(account):token-sha256:\(Self.hex(digest))\n"
            case .role(let account, let role):
                text += "\(account):role:\(role.rawValue)\n"
            }
        }
        return text
    }

    /// Writes the file atomically — a new file in the same folder, readable by
    /// its owner only from the start, renamed over `url` — so a server reading
    /// it meanwhile sees the old users or the new, never half a file.
    /// - Throws: ``UsersFileError`` naming the step that failed; the old file is then unchanged.
    public func write(to url: URL) throws(UsersFileError) {
        do {
            try AtomicFile.replaceContents(of: url, with: Array(render().utf8), permissions: 0o600)
        } catch {
            throw UsersFileError(line: 0, error.message)
        }
    }

    /// The account `credentials` prove, or `nil`.
    public func account(for credentials: Credentials) -> AccountID? {
        switch credentials {
        case .basic(let username, let password):
            var checked = false
            for case .password(let account, let iterations, let salt, let key) in entries where account.rawValue == username {
                checked = true
                if let derived = try? Self.deriveKey(password: password, salt: salt, iterations: iterations),
                    constantTimeEquals(derived, key)
                {
                    return account
                }
            }
            if !checked {
                // An unknown account costs as much as a wrong password, so timing does not tell which accounts exist.
                _ = try? Self.deriveKey(password: password, salt: Self.decoySalt, iterations: decoyIterations)
            }
            return nil
        case .bearer(let token):
            let digest = Array(SHA256.hash(data: Array(token.utf8)))
            for case .token(let account, let expected) in entries where constantTimeEquals(digest, expected) {
                return account
            }
            return nil
        }
    }

    private static let decoySalt = [UInt8](repeating: 0x5A, count: 16)

    /// The iteration count of the file's first password, as the cost of checking an unknown account.
    private var decoyIterations: Int {
        for case .password(_, let iterations, _, _) in entries { return iterations }
        return Self.defaultIterations
    }

    static func deriveKey(password: String, salt: [UInt8], iterations: Int) throws -> [UInt8] {
        let key = try KDF.Insecure.PBKDF2.deriveKey(
            from: Array(password.utf8), salt: salt, using: .sha256, outputByteCount: 32,
            unsafeUncheckedRounds: iterations)
        return key.withUnsafeBytes { Array($0) }
    }

    /// Whether `name` can be an account: 1–128 of letters, digits, `.`, `-`, `_`, `@`.
    public static func isValidAccountName(_ name: String) -> Bool {
        (1...128).contains(name.utf8.count)
            && name.utf8.allSatisfy { byte in
                switch byte {
                case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                    UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "-"), UInt8(ascii: "_"),
                    UInt8(ascii: "@"):
                    true
                default: false
                }
            }
    }

    private static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        return String(decoding: bytes.flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 0x0F)]] }, as: UTF8.self)
    }

    private static func hexBytes(_ text: String) -> [UInt8]? {
        let digits = Array(text.utf8)
        guard digits.count % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        var index = 0
        while index < digits.count {
            guard let pair = UInt8(String(decoding: digits[index..<index + 2], as: UTF8.self), radix: 16) else { return nil }
            bytes.append(pair)
            index += 2
        }
        return bytes
    }
}
