import ArgumentParser
import Foundation
import SyncCore
import SyncJSON

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A file of records that `anchorage records import` reads and `export` writes:
/// its format comes from its extension.
///
/// Each record is an object in the form `anchorage records list` prints — Aquasync's
/// `{"gid", "fields"}`, appSync's `{"guid", "fields"}`, OTA's `{"luid", "entity",
/// "fields"}` — one per line in JSON Lines, or all of them in an array in a
/// document of another codec. JSON (lines or a document) holds fields in the
/// listed form (`{"$date": …}` for a date, `{"$data": …}` for data); the other
/// codecs hold them as their own values.
struct RecordsFile {
    /// How the file holds its records.
    enum Format: Equatable {
        /// One JSON object a line (`.jsonl`, `.ndjson`, or `-` for standard input and output).
        case jsonLines
        /// One document holding an array (`.json`, `.plist`, `.bplist`, `.msgpack`).
        case document(CodecChoice)
    }

    /// The path, or `-` for standard input or output.
    let path: String
    let format: Format

    /// The most records a file may hold: an import this large is refused before anything is written.
    static let maximumRecords = 10_000_000

    /// The file at `path`, in the format its extension names.
    /// - Throws: A validation error naming the extensions known.
    init(_ path: String) throws {
        self.path = path
        switch path == "-" ? "jsonl" : URL(fileURLWithPath: path).pathExtension.lowercased() {
        case "jsonl", "ndjson": format = .jsonLines
        case "json": format = .document(.json)
        case "plist", "xml": format = .document(.xmlPlist)
        case "bplist": format = .document(.binaryPlist)
        case "msgpack", "mpk": format = .document(.msgpack)
        default:
            throw ValidationError(
                "cannot tell the format of \(path) from its extension: use .jsonl, .json, .plist, .bplist or .msgpack")
        }
    }

    /// Whether fields travel in the listed form (JSON has no dates or data of its own).
    private var usesListedForm: Bool { format == .jsonLines || format == .document(.json) }

    /// Every record of the file, each an object whose `fields` are values again (not their listed form).
    /// - Throws: An exit code after one line naming the file and, for JSON Lines, the line.
    func read() throws -> [[String: SyncValue]] {
        let bytes: [UInt8]
        if path == "-" {
            bytes = Array(FileHandle.standardInput.readDataToEndOfFile())
        } else {
            guard let data = FileManager.default.contents(atPath: path) else { throw failure("cannot read \(path)", code: 66) }
            bytes = Array(data)
        }
        var records: [[String: SyncValue]] = []
        switch format {
        case .jsonLines:
            var number = 0
            for line in bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false) {
                number += 1
                guard line.contains(where: { ![0x20, 0x09, 0x0D].contains($0) }) else { continue }
                guard records.count < Self.maximumRecords else { throw tooMany() }
                do {
                    records.append(try record(JSONCodec().decode(Array(line))))
                } catch let error as ExitCode {
                    throw error
                } catch {
                    throw failure("\(path), line \(number): \(error)", code: 65)
                }
            }
        case .document(let choice):
            let items: [SyncValue]
            do {
                guard case .array(let array) = try choice.codec.decode(bytes) else {
                    throw failure("\(path) must hold an array of records", code: 65)
                }
                items = array
            } catch let error as ExitCode {
                throw error
            } catch {
                throw failure("\(path) is not valid \(choice.rawValue): \(error)", code: 65)
            }
            guard items.count <= Self.maximumRecords else { throw tooMany() }
            for (index, item) in items.enumerated() {
                do {
                    records.append(try record(item))
                } catch {
                    throw failure("\(path), record \(index + 1): \(error)", code: 65)
                }
            }
        }
        return records
    }

    /// Writes `records` (objects whose `fields` are values) to the file, whole or not at all.
    /// - Throws: An exit code after one line when the file cannot be written.
    func write(_ records: [[String: SyncValue]]) throws {
        let listed = records.map { record in
            var record = record
            if usesListedForm, let fields = record["fields"]?.dictionaryValue { record["fields"] = RecordFields.listedFields(fields) }
            return SyncValue.dictionary(record)
        }
        var bytes: [UInt8] = []
        do {
            switch format {
            case .jsonLines:
                for record in listed {
                    bytes += try JSONCodec().encode(record)
                    bytes.append(UInt8(ascii: "\n"))
                }
            case .document(let choice):
                bytes = try choice.codec.encode(.array(listed))
            }
        } catch {
            throw failure("cannot write the records as \(format == .jsonLines ? "JSON Lines" : "\(format)"): \(error)", code: 65)
        }
        if path == "-" {
            FileHandle.standardOutput.write(Data(bytes))
            return
        }
        do {
            try Data(bytes).write(to: URL(fileURLWithPath: path), options: .atomic)
        } catch {
            throw failure("cannot write \(path): \(error.localizedDescription)", code: 73)
        }
    }

    /// One record of the file: an object with `fields`, whose values leave their listed form.
    private func record(_ value: SyncValue) throws -> [String: SyncValue] {
        guard case .dictionary(var entries) = value else { throw RecordError("a record must be an object") }
        guard let fields = entries["fields"]?.dictionaryValue else { throw RecordError("a record needs \"fields\", an object") }
        if usesListedForm {
            do {
                entries["fields"] = try RecordFields.untagged(.dictionary(fields))
            } catch {
                throw RecordError(error.description)
            }
        }
        return entries
    }

    private func tooMany() -> ExitCode {
        failure("\(path) holds more than \(Self.maximumRecords) records", code: 65)
    }

    /// A record of the file that is not of the form a stack takes.
    struct RecordError: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }
}

/// How far an import has come, on one line of standard error that a terminal
/// redraws; nothing when standard error is not a terminal.
struct ImportProgress {
    let total: Int
    private let isTerminal = isatty(STDERR_FILENO) == 1

    init(total: Int) { self.total = total }

    /// Shows that `done` of the records are stored.
    func show(_ done: Int) {
        guard isTerminal, total > 0 else { return }
        let width = 30
        let filled = done * width / total
        let bar = Self.bar(filled: filled, width: width)
        FileHandle.standardError.write(Data("\r[\(bar)] \(done)/\(total) records".utf8))
        if done == total { FileHandle.standardError.write(Data("\n".utf8)) }
    }

    /// A bar of `width` characters, the first `filled` of them drawn: the command line's progress bars.
    static func bar(filled: Int, width: Int) -> String {
        String(repeating: "#", count: filled) + String(repeating: "-", count: width - filled)
    }
}
