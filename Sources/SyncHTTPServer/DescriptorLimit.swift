#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The process's limit on open file descriptors (`RLIMIT_NOFILE`), and the
/// cap on open connections that leaves the rest of the server descriptors to work with.
///
/// A server that lets clients take every descriptor fails in places it does
/// not control — the store cannot open its files, the runtime's own threads
/// trap — so `anchorage serve` raises its soft limit to the hard one at start
/// and caps its connections below it:
/// ```swift
/// let limit = DescriptorLimit.raiseToHardLimit()
/// var connections = ConnectionLimits.standard
/// connections.maxOpenConnections = DescriptorLimit.connectionCap(limit: limit)
/// ```
public enum DescriptorLimit {
    /// Raises the soft limit to the hard limit (capped at 1,048,576 where the
    /// hard limit is unlimited) and returns the limit in force afterwards;
    /// `nil` where the limit cannot be read. A limit that cannot be raised stays as it was.
    @discardableResult
    public static func raiseToHardLimit() -> Int? {
        var limit = rlimit()
        guard getrlimit(resourceKind, &limit) == 0 else { return nil }
        let target = limit.rlim_max == unlimited ? rlim_t(1 << 20) : limit.rlim_max
        if limit.rlim_cur != unlimited && limit.rlim_cur < target {
            var raised = limit
            raised.rlim_cur = target
            if setrlimit(resourceKind, &raised) == 0 { limit = raised }
        }
        return limit.rlim_cur == unlimited ? Int.max : Int(clamping: limit.rlim_cur)
    }

    /// The open connections a server with `limit` descriptors may accept: the
    /// limit less a reserve for the store, logs, the users file, outgoing
    /// connections and the runtime — an eighth of the limit, and at least 64
    /// — and never fewer than 1.
    public static func connectionCap(limit: Int) -> Int {
        let reserve = max(64, limit / 8)
        return max(1, limit - reserve)
    }

    /// `RLIM_INFINITY`, which Swift does not import from Glibc's headers.
    #if canImport(Darwin)
    private static let unlimited = RLIM_INFINITY
    #else
    private static let unlimited = rlim_t.max
    #endif

    #if canImport(Glibc)
    private static let resourceKind = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
    #else
    private static let resourceKind = RLIMIT_NOFILE
    #endif
}
