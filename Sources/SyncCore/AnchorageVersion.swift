/// The version of the Anchorage package.
public enum AnchorageVersion {
    /// The version string, `major.minor.patch`.
    public static let current = "0.1.0"
    /// The default `User-Agent` of Anchorage's clients: `Anchorage/<version>`.
    public static var userAgent: String { "Anchorage/\(current)" }
}
