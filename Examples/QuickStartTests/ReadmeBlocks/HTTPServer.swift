// A sync server over HTTP: the Aquasync stack at /deltas, on a memory store, with the accounts of users.txt.
import Aquasync
import Foundation
import Hummingbird                                 // runService(): the server is a Hummingbird application
import SyncCore
import SyncHTTPServer
import SyncJSON

func serveOverHTTP() async throws {
    let store = MemoryStore()                       // or SQLiteStore(path:) from SyncSQLite
    let router = ServiceRouter()
        .mounting(AquasyncServer(store: store, codecs: CodecSet([JSONCodec()])), at: "/deltas")
    let server = HTTPSyncServer(
        service: router,
        authenticator: try UsersFileAuthenticator(contentsOf: URL(fileURLWithPath: "users.txt")),
        configuration: .init(host: "0.0.0.0", port: 8080))
    try await server.runService()                   // returns on SIGINT or SIGTERM
}
