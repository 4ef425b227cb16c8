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

    /// The records of the file, every one checked before any is handed on: a file with a bad record
    /// anywhere is refused whole.
    ///
    /// A JSON Lines file is read twice a page at a time — once to check it, once to hand its records
    /// on — so an import never holds more than a page or two of records however long the file is;
    /// standard input, which cannot be read twice, is kept in memory as bytes. A document of another
    /// codec is parsed whole, as its codec reads it.
    /// - Parameter pageSize: The most records of a JSON Lines file parsed at a time.
    /// - Throws: An exit code after one line naming the file and, for JSON Lines, the line.
    func checkedRecords(pageSize: Int) async throws -> CheckedRecords {
        let bytes: [UInt8]?
        if path == "-" {
            bytes = Array(FileHandle.standardInput.readDataToEndOfFile())
        } else if case .document = format {
            guard let data = FileManager.default.contents(atPath: path) else { throw failure("cannot read \(path)", code: 66) }
            bytes = Array(data)
        } else {
            guard FileManager.default.isReadableFile(atPath: path) else { throw failure("cannot read \(path)", code: 66) }
            bytes = nil
        }
        switch format {
        case .jsonLines:
            let lines = JSONLines(bytes.map(JSONLines.Source.bytes) ?? .file(path))
            let count = try await checkedCount(of: lines, pageSize: pageSize)
            return CheckedRecords(file: self, count: count, content: .jsonLines(lines))
        case .document(let choice):
            let items: [SyncValue]
            do {
                guard case .array(let array) = try choice.codec.decode(bytes ?? []) else {
                    throw failure("\(path) must hold an array of records", code: 65)
                }
                items = array
            } catch let error as ExitCode {
                throw error
            } catch {
                throw failure("\(path) is not valid \(choice.rawValue): \(error)", code: 65)
            }
            guard items.count <= Self.maximumRecords else { throw tooMany() }
            var records: [[String: SyncValue]] = []
            for (index, item) in items.enumerated() {
                do {
                    records.append(try record(item))
                } catch {
                    throw failure("\(path), record \(index + 1): \(error)", code: 65)
                }
            }
            return CheckedRecords(file: self, count: records.count, content: .parsed(records))
        }
    }

    /// How many records `lines` holds, each checked: pages are parsed side by side, as many at a time
    /// as the machine has cores, and the first bad line of the file is the one reported.
    /// - Throws: An exit code after one line naming the file and the line.
    private func checkedCount(of lines: JSONLines, pageSize: Int) async throws -> Int {
        let parallel = max(1, ProcessInfo.processInfo.activeProcessorCount)
        let outcome = await withTaskGroup(of: (index: Int, parsed: Result<Int, Refusal>).self) { pages in
            var count = 0
            var firstFailure: (index: Int, error: Refusal)?
            func take(_ page: (index: Int, parsed: Result<Int, Refusal>)) {
                switch page.parsed {
                case .success(let records): count += records
                case .failure(let error) where page.index < firstFailure?.index ?? .max: firstFailure = (page.index, error)
                case .failure: break
                }
            }
            var position: JSONLines.Position? = .start
            var index = 0
            var running = 0
            while let start = position, firstFailure == nil, count <= Self.maximumRecords {
                let page: (lines: [(number: Int, text: ArraySlice<UInt8>)], next: JSONLines.Position?)
                do throws(Refusal) {
                    page = try read(lines, at: start, lines: pageSize)
                } catch {
                    take((index, .failure(error)))
                    break
                }
                position = page.next
                pages.addTask { [index] in (index, Result { () throws(Refusal) in try records(of: page.lines).count }) }
                index += 1
                running += 1
                if running >= parallel, let done = await pages.next() {
                    take(done)
                    running -= 1
                }
            }
            for await done in pages { take(done) }
            return (count, firstFailure?.error)
        }
        if let error = outcome.1 { throw error.reported() }
        guard outcome.0 <= Self.maximumRecords else { throw tooMany() }
        return outcome.0
    }

    /// The records of up to `count` lines of `lines` from `position`, and where the next page starts.
    /// - Throws: An exit code after one line naming the file and the line.
    fileprivate func readPage(
        _ lines: JSONLines, at position: JSONLines.Position, records count: Int
    ) throws -> (records: [[String: SyncValue]], next: JSONLines.Position?) {
        do throws(Refusal) {
            let page = try read(lines, at: position, lines: count)
            return (try records(of: page.lines), page.next)
        } catch {
            throw error.reported()
        }
    }

    /// Up to `count` lines of `lines` from `position` that are not blank.
    /// - Throws: A ``Refusal`` naming the file and, for a line too long, the line.
    private func read(
        _ lines: JSONLines, at position: JSONLines.Position, lines count: Int
    ) throws(Refusal) -> (lines: [(number: Int, text: ArraySlice<UInt8>)], next: JSONLines.Position?) {
        do {
            return try lines.page(at: position, lines: count)
        } catch let error as JSONLines.LineTooLong {
            throw Refusal("\(path), line \(error.number): longer than \(JSONLines.maximumLineBytes >> 20) MiB", code: 65)
        } catch {
            throw Refusal("cannot read \(path): \(error.localizedDescription)", code: 66)
        }
    }

    /// The records `lines` hold.
    /// - Throws: A ``Refusal`` naming the file and the first bad line.
    private func records(of lines: [(number: Int, text: ArraySlice<UInt8>)]) throws(Refusal) -> [[String: SyncValue]] {
        var records: [[String: SyncValue]] = []
        records.reserveCapacity(lines.count)
        for (number, text) in lines {
            do {
                records.append(try record(JSONCodec().decode(Array(text))))
            } catch {
                throw Refusal("\(path), line \(number): \(error)", code: 65)
            }
        }
        return records
    }

    /// Why a file cannot be imported, not yet reported: pages checked side by side report only the first.
    struct Refusal: Error {
        let message: String
        let code: Int32
        init(_ message: String, code: Int32) {
            self.message = message
            self.code = code
        }

        /// Writes the message to standard error, returning the exit code to end with.
        func reported() -> ExitCode { failure(message, code: code) }
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

/// The records of a file that ``RecordsFile/checkedRecords(pageSize:)`` checked, handed out a page at a time.
struct CheckedRecords: Sendable {
    /// Where the records come from.
    enum Content: Sendable {
        /// All of them, parsed (a document).
        case parsed([[String: SyncValue]])
        /// A JSON Lines file, parsed again a page at a time.
        case jsonLines(JSONLines)
    }

    let file: RecordsFile
    /// How many records the file holds.
    let count: Int
    let content: Content

    /// Hands the records to `prepare` and then `save` in pages of `pageSize`, in the file's order, with
    /// the number of each page's first record (from 1). The next page of a JSON Lines file is parsed
    /// and prepared while `save` works on the current one (``SyncCore/PagedPull``), so reading,
    /// preparing and saving share the machine's cores.
    /// - Throws: What `prepare` or `save` throws; pages saved before stay saved.
    func forEachPage<Prepared: Sendable>(
        of pageSize: Int,
        prepare: @escaping @Sendable (_ records: [[String: SyncValue]], _ firstNumber: Int) async throws -> Prepared,
        save: (_ batch: Prepared, _ firstNumber: Int) async throws -> Void
    ) async throws {
        switch content {
        case .parsed(let records):
            for start in stride(from: 0, to: records.count, by: pageSize) {
                try await save(try await prepare(Array(records[start..<min(start + pageSize, records.count)]), start + 1), start + 1)
            }
        case .jsonLines(let lines):
            let file = self.file
            typealias Cursor = (position: JSONLines.Position, firstNumber: Int)
            typealias Batch = (prepared: Prepared, firstNumber: Int)
            try await PagedPull.run(from: Cursor(position: .start, firstNumber: 1)) { (cursor: Cursor) -> (page: Batch, next: Cursor?)? in
                let page = try file.readPage(lines, at: cursor.position, records: pageSize)
                guard !page.records.isEmpty else { return nil }
                let batch = Batch(prepared: try await prepare(page.records, cursor.firstNumber), firstNumber: cursor.firstNumber)
                return (batch, page.next.map { Cursor(position: $0, firstNumber: cursor.firstNumber + page.records.count) })
            } apply: { (batch: Batch) in
                try await save(batch.prepared, batch.firstNumber)
            }
        }
    }
}

/// A JSON Lines file read a page of lines at a time: from the disk, or from memory for standard input.
struct JSONLines: Sendable {
    /// Where the lines are.
    enum Source: Sendable {
        /// The file at a path, read again for each page.
        case file(String)
        /// Bytes already read.
        case bytes([UInt8])
    }

    /// Where a page starts: the byte offset of its first line and that line's number (from 1).
    struct Position: Sendable, Equatable {
        var offset: Int
        var number: Int
        /// The file's first line.
        static let start = Position(offset: 0, number: 1)
    }

    /// A line longer than ``maximumLineBytes``.
    struct LineTooLong: Error {
        /// The line's number.
        let number: Int
    }

    /// The longest line read; a longer one is refused, so a file without line breaks cannot fill the memory.
    static let maximumLineBytes = 64 << 20
    /// How much of a file one read takes.
    private static let chunkBytes = 1 << 20

    let source: Source

    init(_ source: Source) { self.source = source }

    /// Up to `count` lines that are not blank, from `position`: each with its number, and where the next
    /// page starts (`nil` after the last line).
    /// - Throws: ``LineTooLong``, or the error of reading the file.
    func page(at position: Position, lines count: Int) throws -> (lines: [(number: Int, text: ArraySlice<UInt8>)], next: Position?) {
        switch source {
        case .bytes(let bytes):
            return try Self.lines(in: bytes[position.offset...], from: position, count: count, isEnd: true)
        case .file(let path):
            guard let handle = FileHandle(forReadingAtPath: path) else {
                throw CocoaError(.fileReadNoPermission, userInfo: [NSFilePathErrorKey: path])
            }
            defer { try? handle.close() }
            try handle.seek(toOffset: UInt64(position.offset))
            var buffer: [UInt8] = []
            var lineBreaks = 0
            var sinceLineBreak = 0
            while true {
                let chunk = Array(try handle.read(upToCount: Self.chunkBytes) ?? Data())
                buffer += chunk
                let isEnd = chunk.isEmpty
                if let last = chunk.lastIndex(of: UInt8(ascii: "\n")) {
                    lineBreaks += chunk.count { $0 == UInt8(ascii: "\n") }
                    sinceLineBreak = chunk.count - last - 1
                } else {
                    sinceLineBreak += chunk.count
                }
                guard sinceLineBreak <= Self.maximumLineBytes else {
                    throw LineTooLong(number: position.number + lineBreaks)
                }
                // Enough lines may have arrived (fewer when some are blank): split them; otherwise read on.
                guard isEnd || lineBreaks >= count else { continue }
                let page = try Self.lines(in: buffer[...], from: position, count: count, isEnd: isEnd)
                if isEnd || page.lines.count == count { return page }
            }
        }
    }

    /// The lines of `bytes` (which start at `position`), up to `count` that are not blank. Without
    /// `isEnd`, a last line with no line break after it may be cut short, so it is left for the next read.
    private static func lines(
        in bytes: ArraySlice<UInt8>, from position: Position, count: Int, isEnd: Bool
    ) throws -> (lines: [(number: Int, text: ArraySlice<UInt8>)], next: Position?) {
        var lines: [(number: Int, text: ArraySlice<UInt8>)] = []
        var start = bytes.startIndex
        var number = position.number
        while start < bytes.endIndex, lines.count < count {
            guard let newline = bytes[start...].firstIndex(of: UInt8(ascii: "\n")) else {
                guard bytes.endIndex - start <= maximumLineBytes else { throw LineTooLong(number: number) }
                if isEnd, !isBlank(bytes[start...]) { lines.append((number, bytes[start...])) }
                return (lines, isEnd ? nil : Position(offset: position.offset + start - bytes.startIndex, number: number))
            }
            guard newline - start <= maximumLineBytes else { throw LineTooLong(number: number) }
            if !isBlank(bytes[start..<newline]) { lines.append((number, bytes[start..<newline])) }
            start = newline + 1
            number += 1
        }
        let next = Position(offset: position.offset + start - bytes.startIndex, number: number)
        return (lines, start == bytes.endIndex && isEnd ? nil : next)
    }

    private static func isBlank(_ line: ArraySlice<UInt8>) -> Bool {
        !line.contains { $0 != 0x20 && $0 != 0x09 && $0 != 0x0D }
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
