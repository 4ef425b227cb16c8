#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import SyncTesting
import Testing

struct ChildProcessTests {
    @Test("a child keeps no descriptor of the test process but standard input, output and error")
    func childInheritsNoDescriptor() async throws {
        // Opened without close-on-exec, as a socket another library made may be.
        let descriptor = open("/dev/null", O_RDONLY)
        try #require(descriptor > 2)
        defer { close(descriptor) }

        let outcome = try await ChildProcess.run("sh", arguments: ["-c", "ls /proc/$$/fd"])
        #expect(outcome.status == 0, "\(outcome.errorText)")
        let inherited = Set(outcome.outputText.split(whereSeparator: \.isWhitespace).compactMap { Int32($0) })
        #expect(inherited.isSuperset(of: [0, 1, 2]))
        #expect(!inherited.contains(descriptor), "the child holds descriptor \(descriptor): \(inherited.sorted())")
    }
}
