#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// The source of "now" for record versions and timestamps.
///
/// Logic that tests must control takes a `WallClock` instead of calling
/// `Date()`; `SyncTesting` ships a `TestClock` that moves only when told.
public protocol WallClock: Sendable {
    /// The current time.
    func now() -> Date
}

/// The system's real time.
public struct SystemWallClock: WallClock {
    /// Makes the clock.
    public init() {}
    /// `Date()`.
    public func now() -> Date { Date() }
}

extension WallClock where Self == SystemWallClock {
    /// The system's real time.
    public static var system: SystemWallClock { SystemWallClock() }
}
