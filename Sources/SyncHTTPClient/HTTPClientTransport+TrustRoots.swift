import NIOSSL
public import SyncHTTP

extension HTTPClientTransport {
    /// The certificate authorities an ``HTTPClientTransport`` trusts to sign an
    /// `https://` server's certificate.
    ///
    /// ```swift
    /// // A server whose certificate your own certificate authority signed:
    /// let transport = try HTTPClientTransport(
    ///     baseURL: URL(string: "https://sync.internal:8443")!, trustRoots: .certificates(pemFile: "ca.pem"))
    /// ```
    public struct TrustRoots: Sendable, Hashable {
        private enum Source: Sendable, Hashable {
            case system
            case certificates([NIOSSLCertificate])
        }

        private let source: Source

        private init(_ source: Source) { self.source = source }

        /// The system's trust store: the public certificate authorities (on
        /// Linux, the CA bundle in `/etc/ssl/certs`).
        public static let system = TrustRoots(.system)

        /// The certificate authorities in `pem`, one or more PEM certificates,
        /// trusted instead of the system's.
        /// - Throws: ``TLSSettingsError`` when `pem` holds no certificate.
        public static func certificates(pem: [UInt8]) throws(TLSSettingsError) -> TrustRoots {
            TrustRoots(.certificates(try PEMFile.certificates(in: pem, named: "the trusted certificates")))
        }

        /// The certificate authorities in the PEM file at `path`, trusted
        /// instead of the system's.
        /// - Throws: ``TLSSettingsError`` naming the file when it is missing, cannot be read or holds no certificate.
        public static func certificates(pemFile path: String) throws(TLSSettingsError) -> TrustRoots {
            let pem = try PEMFile.contents(of: path, what: "certificate authority")
            return TrustRoots(.certificates(try PEMFile.certificates(in: pem, named: path)))
        }

        /// How many certificate authorities are trusted, or `nil` for the system's.
        public var count: Int? {
            switch source {
            case .system: nil
            case .certificates(let certificates): certificates.count
            }
        }

        /// swift-nio-ssl's form.
        var nioTrustRoots: NIOSSLTrustRoots {
            switch source {
            case .system: .default
            case .certificates(let certificates): .certificates(certificates)
            }
        }
    }
}
