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

let gid = try await phone.save("Contact", fields: ["name": "Ada Lovelace", "born": 1815])
try await phone.sync()      // pushes the new contact
try await laptop.sync()     // pulls it
print("laptop has", try await laptop.object("Contact", gid: gid)?.fields["name"]?.stringValue ?? "nothing")

try await laptop.save("Contact", gid: gid, fields: ["name": "Ada King", "born": 1815])
try await laptop.sync()
try await phone.sync()
print("phone has", try await phone.object("Contact", gid: gid)?.fields["name"]?.stringValue ?? "nothing")
