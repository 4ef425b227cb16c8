public import SyncHTTP
public import HummingbirdCore
import HummingbirdTLS
public import NIOCore
import NIOSSL

extension HTTPSyncServer {
    /// The certificate chain and private key a server serves HTTPS with.
    ///
    /// ```swift
    /// let tls = try HTTPSyncServer.TLS(certificateChainFile: "/etc/anchorage/cert.pem", privateKeyFile: "/etc/anchorage/key.pem")
    /// let server = HTTPSyncServer(
    ///     service: router, authenticator: authenticator,
    ///     configuration: .init(host: "0.0.0.0", port: 8443, tls: tls))
    /// ```
    ///
    /// Both are PEM. The chain starts with the server's own certificate, which
    /// names the host clients connect to (as a DNS name or an IP address in its
    /// subject alternative names), followed by any intermediate certificates;
    /// the key is the server certificate's private key, unencrypted (PKCS #8,
    /// PKCS #1 RSA or SEC 1 EC). Making a `TLS` reads and checks both — the
    /// PEM parses, and the key belongs to the certificate — so a mistake is
    /// reported before the server listens rather than at the first handshake.
    public struct TLS: Sendable, Hashable {
        /// The certificate chain, PEM: the server's certificate first.
        public let certificateChainPEM: [UInt8]
        /// The private key of the chain's first certificate, PEM.
        public let privateKeyPEM: [UInt8]

        /// Takes a certificate chain and its private key as PEM bytes.
        /// - Throws: ``TLSSettingsError`` when the chain holds no certificate, the key
        ///   is not an unencrypted PEM private key, or the key does not belong to the certificate.
        public init(certificateChainPEM: [UInt8], privateKeyPEM: [UInt8]) throws(TLSSettingsError) {
            try self.init(
                certificateChainPEM: certificateChainPEM, privateKeyPEM: privateKeyPEM,
                chainName: "the certificate chain", keyName: "the private key")
        }

        /// Reads a certificate chain and its private key from PEM files.
        /// - Parameters:
        ///   - certificateChainFile: The path of the certificate chain: the server's certificate first.
        ///   - privateKeyFile: The path of the private key (which only the server's user should be able to read).
        /// - Throws: ``TLSSettingsError`` naming the file that is missing, cannot be
        ///   read or holds no certificate or key, or saying that the key does not belong to the certificate.
        public init(certificateChainFile: String, privateKeyFile: String) throws(TLSSettingsError) {
            try self.init(
                certificateChainPEM: try PEMFile.contents(of: certificateChainFile, what: "certificate"),
                privateKeyPEM: try PEMFile.contents(of: privateKeyFile, what: "private key"),
                chainName: certificateChainFile, keyName: privateKeyFile)
        }

        private init(
            certificateChainPEM: [UInt8], privateKeyPEM: [UInt8], chainName: String, keyName: String
        ) throws(TLSSettingsError) {
            self.certificateChainPEM = certificateChainPEM
            self.privateKeyPEM = privateKeyPEM
            let chain = try PEMFile.certificates(in: certificateChainPEM, named: chainName)
            let key: NIOSSLPrivateKey
            do {
                key = try NIOSSLPrivateKey(bytes: privateKeyPEM, format: .pem)
            } catch {
                throw TLSSettingsError(
                    .invalid, "\(keyName) holds no unencrypted PEM private key (it should start with -----BEGIN PRIVATE KEY-----)")
            }
            do {
                _ = try NIOSSLContext(configuration: Self.serverConfiguration(chain: chain, key: key))
            } catch {
                throw TLSSettingsError(.mismatched, "the private key in \(keyName) does not belong to the certificate in \(chainName)")
            }
        }

        /// swift-nio-ssl's server configuration for this chain and key.
        func makeTLSConfiguration() throws -> TLSConfiguration {
            Self.serverConfiguration(
                chain: try NIOSSLCertificate.fromPEMBytes(certificateChainPEM),
                key: try NIOSSLPrivateKey(bytes: privateKeyPEM, format: .pem))
        }

        private static func serverConfiguration(chain: [NIOSSLCertificate], key: NIOSSLPrivateKey) -> TLSConfiguration {
            var configuration = TLSConfiguration.makeServerConfiguration(
                certificateChain: chain.map { .certificate($0) }, privateKey: .privateKey(key))
            configuration.minimumTLSVersion = .tlsv12
            return configuration
        }
    }

    /// Hummingbird's server: HTTP/1.1 under ``Configuration/connections``' time limits, inside TLS when
    /// ``Configuration/tls`` is set.
    public var server: HTTPServerBuilder {
        serverBuilder { responder in HTTP1Channel(responder: responder, configuration: http1Configuration()) }
    }

    /// HTTP/1.1's configuration for this server: the handlers that report each request's progress to the
    /// connection's time limits, then `handlers` (made anew for every connection).
    public func http1Configuration(
        adding handlers: @autoclosure @escaping @Sendable () -> [any RemovableChannelHandler] = []
    ) -> HTTP1Channel.Configuration {
        HTTP1Channel.Configuration(additionalChannelHandlers: [RequestProgressObserver()] + handlers())
    }

    /// A server whose connections are made by `makeChannel` (an HTTP/1.1 channel, or one that upgrades to a
    /// WebSocket, made with ``http1Configuration(adding:)``), under ``Configuration/connections``' time
    /// limits, and inside TLS when ``Configuration/tls`` is set.
    public func serverBuilder<Base: ServerChildChannel>(
        _ makeChannel: @escaping @Sendable (_ responder: @escaping HTTPChannelHandler.Responder) throws -> Base
    ) -> HTTPServerBuilder {
        let (limits, tls) = (serverConfiguration.connections, serverConfiguration.tls)
        let tlsConfiguration: TLSConfiguration?
        do {
            tlsConfiguration = try tls?.makeTLSConfiguration()
        } catch {
            // Not reached: `TLS` checked its PEM when it was made. Should it happen, running fails before listening.
            return HTTPServerBuilder { _ in throw error }
        }
        return HTTPServerBuilder { responder in
            let guarded = GuardedChannel(try makeChannel(responder), limits: limits, awaitsTLSHandshake: tls != nil)
            guard let tlsConfiguration else { return guarded }
            return try TLSChannel(guarded, tlsConfiguration: tlsConfiguration)
        }
    }
}
