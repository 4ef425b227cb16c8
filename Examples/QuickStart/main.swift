// A sync server and two devices in one process: memory stores, JSON, the Aquasync stack.
// This is Examples/QuickStart/main.swift; `swift run QuickStart` runs it.
import Aquasync
import SyncCore
import SyncJSON

// The server: records in a memory store, the Aquasync stack mounted at /deltas.
let server = ServiceRouter()
    .mounting(AquasyncServer(store: MemoryStore(), codecs: CodecSet([JSONCodec()])), at: "/deltas")

// In process, requests pass the same authentication an HTTP server applies.
let transport = LoopbackTransport(service: server, authenticator: StaticAuthenticator(passwords: ["ada": "secret"]))
    .with(CredentialsMiddleware(.basic(username: "ada", password: "secret")))

// Two of Ada's devices, each with a store of its own.
let phone = AquasyncClient(store: MemoryStore(), transport: transport, codec: JSONCodec())
let laptop = AquasyncClient(store: MemoryStore(), transport: transport, codec: JSONCodec())

// A contact is a Codable type; its id is the record's (a lowercase UUID), its properties the fields.
struct Contact: SyncModel {
    static let modelName = "Contact"
    var id = TimeOrderedUUID.makeID()
    var name: String
    var born: Int?
}

let ada = Contact(name: "Ada Lovelace", born: 1815)
try await phone.save(ada)
try await phone.sync()      // pushes the new contact
try await laptop.sync()     // pulls it
print("laptop has", try await laptop.model(Contact.self, id: ada.id)?.name ?? "nothing")

var renamed = try await laptop.model(Contact.self, id: ada.id) ?? ada
renamed.name = "Ada King"
try await laptop.save(renamed)
try await laptop.sync()
try await phone.sync()
print("phone has", try await phone.model(Contact.self, id: ada.id)?.name ?? "nothing")
