#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif
import Hummingbird
import ServiceLifecycle
public import Logging
public import SyncCore

extension HTTPSyncServer {
    /// Starts a server, calls `body` with its base URL while it serves, and
    /// shuts it down when `body` returns or throws.
    ///
    /// With the default configuration the server listens on `127.0.0.1` on a
    /// port the system chooses, so tests can run side by side; with
    /// ``Configuration/tls`` set, the base URL is `https://`:
    /// ```swift
    /// try await HTTPSyncServer.withRunningServer(service: echo, authenticator: authenticator) { baseURL in
    ///     let transport = HTTPClientTransport(baseURL: baseURL)
    ///     let response = try await transport.send(SyncRequest(method: .get, path: "/hello"))
    /// }
    /// ```
    /// - Returns: What `body` returns.
    /// - Throws: What `body` throws, or the server's error when it cannot
    ///   listen (the port is taken, the host unknown).
    public static func withRunningServer<Result: Sendable>(
        service: any SyncService,
        authenticator: any SyncAuthenticator,
        configuration: Configuration = Configuration(),
        logger: Logger = Logger(label: "anchorage.http"),
        sleeper: any Clock<Duration> = ContinuousClock(),
        _ body: (_ baseURL: URL) async throws -> Result
    ) async throws -> Result {
        let (ports, portContinuation) = AsyncStream.makeStream(of: Int.self, bufferingPolicy: .bufferingNewest(1))
        let server = HTTPSyncServer(
            service: service, authenticator: authenticator, configuration: configuration, logger: logger,
            onRunning: { port in
                portContinuation.yield(port)
                portContinuation.finish()
            }, sleeper: sleeper)
        let services = ServiceGroup(
            configuration: ServiceGroupConfiguration(services: [server], gracefulShutdownSignals: [], logger: logger))
        return try await withThrowingTaskGroup(of: Void.self, returning: Result.self) { group in
            group.addTask {
                defer { portContinuation.finish() }
                try await services.run()
            }
            var iterator = ports.makeAsyncIterator()
            guard let port = await iterator.next() else {
                try await group.next()
                throw HTTPSyncServerError("the server stopped before it listened on \(configuration.host)")
            }
            let result: Result
            do {
                result = try await body(baseURL(scheme: configuration.scheme, host: configuration.host, port: port))
            } catch {
                await services.triggerGracefulShutdown()
                try? await group.waitForAll()
                throw error
            }
            await services.triggerGracefulShutdown()
            try await group.waitForAll()
            return result
        }
    }

    /// Starts a server whose login throttle and request timeout go by `clock`, as the method above does.
    @available(*, deprecated, renamed: "withRunningServer(service:authenticator:configuration:logger:sleeper:_:)")
    public static func withRunningServer<Result: Sendable>(
        service: any SyncService,
        authenticator: any SyncAuthenticator,
        configuration: Configuration = Configuration(),
        logger: Logger = Logger(label: "anchorage.http"),
        clock: any Clock<Duration>,
        _ body: (_ baseURL: URL) async throws -> Result
    ) async throws -> Result {
        try await withRunningServer(
            service: service, authenticator: authenticator, configuration: configuration, logger: logger, sleeper: clock,
            body)
    }

    /// `scheme://host:port`, with a wildcard host replaced by loopback.
    static func baseURL(scheme: String = "http", host: String, port: Int) throws -> URL {
        let reachableHost: String
        switch host {
        case "0.0.0.0", "": reachableHost = "127.0.0.1"
        case "::", "[::]": reachableHost = "[::1]"
        default: reachableHost = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
        }
        guard let url = URL(string: "\(scheme)://\(reachableHost):\(port)") else {
            throw HTTPSyncServerError("'\(host)' does not make a valid URL")
        }
        return url
    }
}

/// Why ``HTTPSyncServer/withRunningServer(service:authenticator:configuration:logger:sleeper:_:)`` could not provide a server.
public struct HTTPSyncServerError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What went wrong.
    public var message: String
    /// Makes an error.
    public init(_ message: String) { self.message = message }
    /// The message.
    public var description: String { message }
}
