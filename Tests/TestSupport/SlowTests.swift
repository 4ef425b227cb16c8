import Foundation

/// Whether the slow tests run: the crash matrix, the 100,000-record row-count tests and the other
/// long runs that would make a plain `swift test` take many minutes.
///
/// They run when the environment variable `ANCHORAGE_SLOW_TESTS` is set to anything but empty or `0`
/// (`ANCHORAGE_SLOW_TESTS=1 swift test`); `scripts/test.sh`, and so CI, sets it, so there every test
/// runs. Without it they are skipped, with the reason, and a plain `swift test` stays quick. A slow
/// test says so with Swift Testing's condition trait and the reason it is slow:
///
/// ```swift
/// @Test("…", .enabled(if: SlowTests.enabled, "fills 100,000 records (a minute or more): \(SlowTests.howToRun)"))
/// ```
public enum SlowTests {
    /// The environment variable that turns the slow tests on.
    public static let variable = "ANCHORAGE_SLOW_TESTS"

    /// Whether the environment asks for the slow tests.
    public static let enabled: Bool = {
        guard let value = ProcessInfo.processInfo.environment[variable] else { return false }
        return !value.isEmpty && value != "0"
    }()

    /// The end of a skipped slow test's reason: how to run it.
    public static let howToRun = "set \(variable)=1 to run it (scripts/test.sh does)"
}
