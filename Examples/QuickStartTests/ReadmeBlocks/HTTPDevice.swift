// A device that syncs with that server over HTTP.
import Aquasync
import Foundation
import SyncCore
import SyncHTTPClient
import SyncJSON

func syncOverHTTP() async throws {
    let device = AquasyncClient(
        store: MemoryStore(),                       // a SQLiteStore keeps the device's records across launches
        transport: HTTPClientTransport(baseURL: URL(string: "http://127.0.0.1:8080")!)
            .with(CredentialsMiddleware(.basic(username: "ada", password: "secret"))),
        codec: JSONCodec())
    let gid = try await device.save("Contact", fields: ["name": "Ada"])
    try await device.sync()
    print("saved and synced", gid)
}
