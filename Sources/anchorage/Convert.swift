import ArgumentParser
import Foundation
import SyncCore

/// `anchorage convert`: re-encodes a document in another codec, like `plutil -convert`.
struct Convert: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Convert a document between codecs (xml-plist, binary-plist, json, msgpack).",
        discussion: """
            Reads INPUT (or standard input) and writes OUTPUT (or standard output). A value the \
            target format cannot carry — null in a property list, a sub-second date in an XML \
            plist — is an error, never a silent change. JSON carries dates and data as strings.

            A refusal is one line on standard error: exit status 65 for input that cannot be read \
            or written in the target format, 66 for a missing input file, 73 for an output file \
            that cannot be written, 64 for a mistake on the command line.
            """
    )

    @Option(help: "The input codec; detected from the first bytes when omitted.")
    var from: CodecChoice?

    @Option(help: "The output codec.")
    var to: CodecChoice

    @Argument(help: "The input file; standard input when omitted or '-'.")
    var input: String?

    @Argument(help: "The output file; standard output when omitted or '-'.")
    var output: String?

    func run() throws {
        let bytes = try readInput()
        guard let source = from ?? CodecChoice.detect(bytes) else {
            throw ValidationError("cannot tell the input format; name it with --from")
        }
        let value: SyncValue
        do {
            value = try source.codec.decode(bytes)
        } catch {
            throw failure("input is not valid \(source.rawValue): \(error)", code: 65)
        }
        let encoded: [UInt8]
        do {
            encoded = try to.codec.encode(value)
        } catch {
            throw failure("cannot write \(to.rawValue): \(error)", code: 65)
        }
        try writeOutput(encoded)
        // The process ends right after this command: leave the decoded document to the exit,
        // which reclaims it at once, instead of freeing it object by object (a large share of
        // the time of a large conversion).
        _ = Unmanaged.passRetained(LeftForExit(value))
    }

    private func readInput() throws -> [UInt8] {
        if let input, input != "-" {
            guard let bytes = Self.contents(ofFile: input) else {
                throw failure("cannot read \(input)", code: 66)
            }
            return bytes
        }
        return Array(FileHandle.standardInput.readDataToEndOfFile())
    }

    /// The bytes of the file at `path`, or `nil` when it cannot be read. A regular file is read
    /// straight into the array, without the `Data` and the copy of it that `FileManager` makes.
    private static func contents(ofFile path: String) -> [UInt8]? {
        let file = open(path, O_RDONLY | O_CLOEXEC)
        guard file >= 0 else { return nil }
        defer { close(file) }
        var status = stat()
        guard fstat(file, &status) == 0, status.st_mode & mode_t(S_IFMT) == mode_t(S_IFREG), status.st_size > 0 else {
            // A pipe, a device or a file that reports no size: read it the general way.
            return FileManager.default.contents(atPath: path).map { Array($0) }
        }
        var failed = false
        let bytes = [UInt8](unsafeUninitializedCapacity: Int(status.st_size)) { buffer, initialized in
            initialized = 0
            while initialized < buffer.count {
                let count = read(file, buffer.baseAddress! + initialized, buffer.count - initialized)
                if count < 0, errno == EINTR { continue }
                failed = count < 0
                guard count > 0 else { break }
                initialized += count
            }
        }
        return failed ? nil : bytes
    }

    private func writeOutput(_ bytes: [UInt8]) throws {
        try bytes.withUnsafeBytes { buffer in
            // A `Data` over the array's own bytes: written without copying them first.
            let data = buffer.isEmpty
                ? Data() : Data(bytesNoCopy: UnsafeMutableRawPointer(mutating: buffer.baseAddress!), count: buffer.count, deallocator: .none)
            if let output, output != "-" {
                do {
                    try data.write(to: URL(fileURLWithPath: output), options: .atomic)
                } catch {
                    throw failure("cannot write \(output): \(error.localizedDescription)", code: 73)
                }
            } else {
                FileHandle.standardOutput.write(data)
            }
        }
    }
}

/// A decoded document kept alive until the process exits (see ``Convert/run()``).
private final class LeftForExit {
    let value: SyncValue
    init(_ value: SyncValue) { self.value = value }
}

/// Prints `line` to standard error and returns the exit code to throw, so that
/// a failed command ends with one clear line and no stack of details.
func failure(_ line: String, code: Int32) -> ExitCode {
    FileHandle.standardError.write(Data(("anchorage: " + line + "\n").utf8))
    return ExitCode(code)
}
