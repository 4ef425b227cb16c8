import NIOCore
import NIOPosix

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// One plain line for a connection that could not be made or was cut, from
/// the errors SwiftNIO throws: `cannot connect to 127.0.0.1:39377: connection
/// refused` rather than a library's type dump.
///
/// Every client that opens connections of its own (HTTP, WebDAV, IMAP) says
/// it the same way (`HTTPClientTransport` first turns AsyncHTTPClient's
/// connect time-out and closed connection into SwiftNIO's errors):
/// ```swift
/// } catch {
///     let line = ConnectionFailure.describe(error, host: "mail.example.com", port: 993) ?? "\(error)"
/// }
/// ```
public enum ConnectionFailure {
    /// The sentence for `error` on a connection to `host:port`, or `nil` when `error` is not a connection's failure.
    public static func describe(_ error: any Error, host: String, port: Int) -> String? {
        let address = host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
        switch kind(of: error) {
        case .notConnecting(let reason)?: return "cannot connect to \(address): \(reason)"
        case .cut(let reason)?: return "the connection to \(address) was cut before the answer came (\(reason))"
        case .closedByServer?: return "the server at \(address) closed the connection before answering"
        case nil: return nil
        }
    }

    /// Whether `error` says that no connection could be made at all (refused, unreachable, no address,
    /// no answer to the connect): the server cannot be reached, and further requests would fail alike.
    public static func isUnreachable(_ error: any Error) -> Bool {
        if case .notConnecting? = kind(of: error) { return true }
        return false
    }

    private enum Kind {
        case notConnecting(String)
        case cut(String)
        case closedByServer
    }

    private static let connectErrors: Set<CInt> = [ECONNREFUSED, ENETUNREACH, EHOSTUNREACH, ETIMEDOUT, EADDRNOTAVAIL]

    private static func kind(of error: any Error) -> Kind? {
        switch error {
        case let error as NIOConnectionError:
            if let failure = error.connectionErrors.first {
                if let io = failure.error as? IOError { return .notConnecting(reason(errno: io.errnoCode)) }
                if let channel = failure.error as? ChannelError, case .connectTimeout = channel {
                    return .notConnecting("no answer to the connection")
                }
                return .notConnecting("\(failure.error)")
            }
            return .notConnecting("the name \(error.host) has no address")
        case let error as IOError:
            return connectErrors.contains(error.errnoCode)
                ? .notConnecting(reason(errno: error.errnoCode)) : .cut(reason(errno: error.errnoCode))
        case let error as ChannelError:
            if case .connectTimeout = error { return .notConnecting("no answer to the connection") }
            if error == .ioOnClosedChannel || error == .eof { return .closedByServer }
            return nil
        default:
            return nil
        }
    }

    /// The system's reason for `errno`, with a small first letter: `connection refused`.
    private static func reason(errno: CInt) -> String {
        let text = String(cString: strerror(errno))
        return text.prefix(1).lowercased() + text.dropFirst()
    }
}
