import Logging
import PostgresNIO

/// Runs the store's queries as statements prepared once on each connection, so PostgreSQL parses
/// them once per connection instead of once per query.
///
/// postgres-nio prepares a statement on a connection the first time it runs there, under the
/// statement type's static `name`, from its static `sql`. The store's SQL names its schema, which
/// the store's configuration chooses at run time, so the statement type cannot spell it out:
/// ``StorePreparedStatement`` reads its name and SQL from a task-local value that ``run(_:on:logger:)``
/// sets around the call, and its name is made from the SQL (a 64-bit FNV-1a hash of the text), so
/// each distinct text — each schema, each shape of a commit — is prepared once per connection.
enum PreparedQueries {
    /// Runs `query` on a connection of `client`'s pool as a prepared statement; its rows.
    static func run(_ query: PostgresQuery, on client: PostgresClient, logger: Logger) async throws
        -> AsyncThrowingMapSequence<PostgresRowSequence, PostgresRow>
    {
        try await StorePreparedStatement.$current.withValue(StorePreparedStatement.Text(query.sql)) {
            try await client.execute(StorePreparedStatement(bindings: query.binds), logger: logger)
        }
    }

    /// Runs `query` on `connection` as a prepared statement; its rows.
    static func run(_ query: PostgresQuery, on connection: PostgresConnection, logger: Logger) async throws
        -> AsyncThrowingMapSequence<PostgresRowSequence, PostgresRow>
    {
        try await StorePreparedStatement.$current.withValue(StorePreparedStatement.Text(query.sql)) {
            try await connection.execute(StorePreparedStatement(bindings: query.binds), logger: logger)
        }
    }
}

/// The statement ``PreparedQueries`` runs: whatever SQL the task-local ``current`` holds, with the binds given.
struct StorePreparedStatement: PostgresPreparedStatement {
    /// A statement's SQL and the name it is prepared under.
    struct Text: Sendable {
        let sql: String
        let name: String

        init(_ sql: String) {
            self.sql = sql
            var hash: UInt64 = 0xcbf2_9ce4_8422_2325
            for byte in sql.utf8 {
                hash ^= UInt64(byte)
                hash &*= 0x0000_0100_0000_01b3
            }
            name = "anchorage_" + String(hash, radix: 16)
        }
    }

    /// The statement being run by this task.
    @TaskLocal static var current = Text("")

    static var name: String { current.name }
    static var sql: String { current.sql }

    typealias Row = PostgresRow

    /// The values of the statement's placeholders.
    let bindings: PostgresBindings

    func makeBindings() throws -> PostgresBindings { bindings }

    func decodeRow(_ row: PostgresRow) throws -> PostgresRow { row }
}
