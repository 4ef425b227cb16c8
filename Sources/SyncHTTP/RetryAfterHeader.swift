/// HTTP's `Retry-After` header in the delay form, whole seconds, as
/// ``SyncCore/SyncResponse/retryAfter`` travels.
package enum RetryAfterHeader {
    /// The header value for `delay`: its seconds, rounded up, never negative.
    package static func value(for delay: Duration) -> String {
        let (seconds, attoseconds) = delay.components
        return String(max(0, seconds + (attoseconds > 0 ? 1 : 0)))
    }

    /// The delay a header value gives, or `nil` for none or for the HTTP-date form,
    /// which a client then treats as absent.
    package static func delay(from value: String?) -> Duration? {
        guard let value, let seconds = Int64(value.trimmedOfHTTPWhitespace), seconds >= 0 else { return nil }
        return .seconds(seconds)
    }
}
