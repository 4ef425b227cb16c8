import ArgumentParser
import Foundation
import SyncCore
import SyncHTTPServer

/// `anchorage users`: manages the users file a server authenticates against.
struct Users: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Manage the users file: accounts with salted password hashes and bearer tokens.",
        subcommands: [Add.self, Remove.self, Revoke.self, Operator.self, List.self]
    )

    struct FileOption: ParsableArguments {
        @Option(name: .customLong("file"), help: "The users file.")
        var path = "users.txt"

        var url: URL { URL(fileURLWithPath: path) }

        /// The file's users, or none when it does not exist yet.
        func load() throws -> UsersFile {
            guard FileManager.default.fileExists(atPath: path) else { return UsersFile() }
            do {
                return try UsersFile.load(from: url)
            } catch {
                throw failure(error.line > 0 ? "\(path) \(error)" : "\(error)", code: 65)
            }
        }

        /// The file's users, which must include `account` (exit status 67 otherwise).
        func load(requiring account: String) throws -> UsersFile {
            let users = try load()
            guard users.accounts.contains(AccountID(account)) else {
                throw failure("\(account) is not in \(path)", code: 67)
            }
            return users
        }
    }

    struct Add: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Add a password (read from standard input) or a bearer token for an account.")

        @Argument(help: "The account name: letters, digits, '.', '-', '_', '@'.")
        var account: String

        @OptionGroup var file: FileOption

        @Option(help: "Add this bearer token instead of a password.")
        var token: String?

        @Option(help: "PBKDF2 iterations for the password hash.")
        var iterations = UsersFile.defaultIterations

        @Flag(name: .customLong("operator"), help: "Also let the account open the operator console (serve --console).")
        var isOperator = false

        func run() throws {
            var users = try file.load()
            if isOperator { users = try users.granting(.operator, to: AccountID(account)) }
            if let token {
                users = try users.addingToken(account: AccountID(account), token: token)
            } else {
                guard let password = readLine(strippingNewline: true), !password.isEmpty else {
                    throw failure("give the password on standard input: echo 'secret' | anchorage users add \(account)", code: 64)
                }
                users = try users.adding(account: AccountID(account), password: password, iterations: iterations)
            }
            try users.write(to: file.url)
            print("\(account) added to \(file.path)")
        }
    }

    struct Remove: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Remove every password and token of an account.")

        @Argument(help: "The account name.")
        var account: String

        @OptionGroup var file: FileOption

        func run() throws {
            let users = try file.load(requiring: account)
            try users.removing(account: AccountID(account)).write(to: file.url)
            print("\(account) removed from \(file.path)")
        }
    }

    struct Revoke: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Remove every bearer token of an account, keeping its passwords.",
            discussion: """
                A running server reads the file again when it changes, so the tokens stop working at once; \
                the account still signs in with its password.
                """)

        @Argument(help: "The account name.")
        var account: String

        @OptionGroup var file: FileOption

        func run() throws {
            let users = try file.load(requiring: account)
            let revoked = users.revokingTokens(of: AccountID(account))
            let count = users.entries.count - revoked.entries.count
            if count > 0 { try revoked.write(to: file.url) }
            print("\(account): \(count) token\(count == 1 ? "" : "s") revoked in \(file.path)")
        }
    }

    struct Operator: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Let an account open the operator console, or with --remove no longer.",
            discussion: """
                The operator console (`anchorage serve --console`) shows every account's devices and records, \
                so only accounts marked as operators may open it; others get 403. A running server reads the \
                file again when it changes.
                """)

        @Argument(help: "The account name.")
        var account: String

        @OptionGroup var file: FileOption

        @Flag(help: "Withdraw the right instead of granting it.")
        var remove = false

        func run() throws {
            let users = try file.load(requiring: account)
            let changed =
                remove ? users.withdrawing(.operator, from: AccountID(account)) : try users.granting(.operator, to: AccountID(account))
            if changed != users { try changed.write(to: file.url) }
            print("\(account) \(remove ? "is not" : "is") an operator in \(file.path)")
        }
    }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the accounts; operators are marked.")

        @OptionGroup var file: FileOption

        func run() throws {
            let users = try file.load()
            for account in users.accounts { print(users.has(.operator, account) ? "\(account) (operator)" : "\(account)") }
        }
    }
}
