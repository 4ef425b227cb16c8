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
    }

    private func readInput() throws -> [UInt8] {
        if let input, input != "-" {
            guard let data = FileManager.default.contents(atPath: input) else {
                throw failure("cannot read \(input)", code: 66)
            }
            return Array(data)
        }
        return Array(FileHandle.standardInput.readDataToEndOfFile())
    }

    private func writeOutput(_ bytes: [UInt8]) throws {
        if let output, output != "-" {
            do {
                try Data(bytes).write(to: URL(fileURLWithPath: output), options: .atomic)
            } catch {
                throw failure("cannot write \(output): \(error.localizedDescription)", code: 73)
            }
        } else {
            FileHandle.standardOutput.write(Data(bytes))
        }
    }
}

/// Prints `line` to standard error and returns the exit code to throw, so that
/// a failed command ends with one clear line and no stack of details.
func failure(_ line: String, code: Int32) -> ExitCode {
    FileHandle.standardError.write(Data(("anchorage: " + line + "\n").utf8))
    return ExitCode(code)
}
