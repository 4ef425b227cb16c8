/// Why TLS settings cannot be made: a file that cannot be read, PEM that
/// holds no certificate or key, or a private key that does not belong to the
/// certificate.
///
/// ```swift
/// do {
///     let tls = try HTTPSyncServer.TLS(certificateChainFile: "cert.pem", privateKeyFile: "key.pem")
/// } catch {
///     print(error)   // "the private key in key.pem does not belong to the certificate in cert.pem"
/// }
/// ```
public struct TLSSettingsError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The kind of problem.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private let name: String
        private init(_ name: String) { self.name = name }
        /// A file is missing or cannot be read.
        public static let unreadable = Code("unreadable")
        /// The bytes are not PEM of the expected kind: no certificate, or no
        /// unencrypted private key.
        public static let invalid = Code("invalid")
        /// The private key does not belong to the first certificate of the chain.
        public static let mismatched = Code("mismatched")
        /// The code's name.
        public var description: String { name }
    }

    /// The kind of problem.
    public var code: Code
    /// What is wrong, on one line, naming the file.
    public var message: String

    /// Makes an error.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// The message.
    public var description: String { message }
}
