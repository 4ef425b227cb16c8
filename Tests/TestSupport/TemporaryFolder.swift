import Foundation

/// A new empty folder under the system's temporary folder, for one test,
/// removed with everything in it when the last reference goes.
///
/// ```swift
/// let folder = try TemporaryFolder("serve")
/// let users = folder.path("users.txt")
/// ```
public final class TemporaryFolder: Sendable {
    /// The folder.
    public let url: URL

    /// Makes a new folder whose name starts with `prefix`.
    public init(_ prefix: String) throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("\(prefix)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    /// The folder's path.
    public var path: String { url.path }

    /// The path of `name` inside the folder.
    public func path(_ name: String) -> String { url.appendingPathComponent(name).path }

    deinit { try? FileManager.default.removeItem(at: url) }
}
