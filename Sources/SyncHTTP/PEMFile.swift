#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NIOSSL

/// Reads the PEM a server serves TLS with and the certificate authorities a client trusts, with a
/// ``TLSSettingsError`` that names the file.
package enum PEMFile {
    /// The certificates in `pem`, at least one.
    /// - Throws: ``TLSSettingsError/Code/invalid`` naming `name` when `pem` holds no certificate.
    package static func certificates(in pem: [UInt8], named name: String) throws(TLSSettingsError) -> [NIOSSLCertificate] {
        let certificates: [NIOSSLCertificate]
        do {
            certificates = try NIOSSLCertificate.fromPEMBytes(pem)
        } catch {
            certificates = []
        }
        guard !certificates.isEmpty else {
            throw TLSSettingsError(
                .invalid, "\(name) holds no PEM certificate (it should start with -----BEGIN CERTIFICATE-----)")
        }
        return certificates
    }

    /// The bytes of the file at `path`, which holds a `what` (`certificate`, `private key`).
    /// - Throws: ``TLSSettingsError/Code/unreadable`` naming the file when it is missing or cannot be read.
    package static func contents(of path: String, what: String) throws(TLSSettingsError) -> [UInt8] {
        let url = URL(fileURLWithPath: path)
        do {
            return try AtomicFile.contents(of: url)
        } catch {
            // "cannot open /absolute/path: No such file or directory": the system's reason, for the path as given.
            let reason = error.message.components(separatedBy: "\(url.path): ").last ?? error.message
            throw TLSSettingsError(.unreadable, "the \(what) file \(path) cannot be read: \(reason)")
        }
    }
}
