import ArgumentParser
import CoreMetrics
import Foundation
import Logging
import Prometheus
import SyncHTTPServer
import Synchronization

/// How `anchorage serve` writes its log lines (to standard error).
enum LogFormat: String, ExpressibleByArgument, CaseIterable {
    /// swift-log's text lines: `time level label: metadata message`.
    case text
    /// One JSON object per line: `time`, `level`, `message`, `label`, `metadata`.
    case json
}

extension Serve {
    /// Sends every logger to standard error in `format` at `level`, with the request id of the
    /// request being answered, and every metric to a Prometheus registry, which it returns.
    static func bootstrapObservability(format: LogFormat, level: Logger.Level) -> PrometheusCollectorRegistry {
        LoggingSystem.bootstrap(
            { label, provider in
                var handler: any LogHandler =
                    switch format {
                    case .text: TextLogHandler(label: label, metadataProvider: provider)
                    case .json: JSONLogHandler(label: label, metadataProvider: provider)
                    }
                handler.logLevel = level
                return handler
            }, metadataProvider: RequestID.metadataProvider)
        let registry = PrometheusCollectorRegistry()
        MetricsSystem.bootstrap(PrometheusMetricsFactory(registry: registry))
        return registry
    }
}

/// swift-log's text lines on standard error (`StreamLogHandler`), handed the logger's metadata only when a line
/// is written: `StreamLogHandler` formats its metadata each time it is set, and the HTTP server sets a request
/// id on the logger of every request, most of which write no line.
struct TextLogHandler: LogHandler {
    private var lines: StreamLogHandler
    var metadata: Logger.Metadata = [:]

    init(label: String, metadataProvider: Logger.MetadataProvider?) {
        lines = StreamLogHandler.standardError(label: label, metadataProvider: metadataProvider)
    }

    var logLevel: Logger.Level {
        get { lines.logLevel }
        set { lines.logLevel = newValue }
    }

    var metadataProvider: Logger.MetadataProvider? {
        get { lines.metadataProvider }
        set { lines.metadataProvider = newValue }
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        var lines = lines
        lines.metadata = metadata
        lines.log(event: event)
    }
}

/// Writes each log line to standard error as one JSON object:
/// `{"time":"2026-01-01T12:00:00.000Z","level":"info","label":"anchorage.serve","message":"…","metadata":{…}}`.
struct JSONLogHandler: LogHandler {
    let label: String
    var logLevel: Logger.Level = .info
    var metadata: Logger.Metadata = [:]
    var metadataProvider: Logger.MetadataProvider?

    /// Serializes whole lines, so lines from concurrent requests never interleave.
    private static let output = Mutex(())

    init(label: String, metadataProvider: Logger.MetadataProvider?) {
        self.label = label
        self.metadataProvider = metadataProvider
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        var merged = metadata
        if let provided = metadataProvider?.get() { merged.merge(provided) { _, new in new } }
        if let own = event.metadata { merged.merge(own) { _, new in new } }
        var object: [String: Any] = [
            "time": Date().formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true)),
            "level": event.level.rawValue,
            "label": label,
            "message": event.message.description,
        ]
        if !merged.isEmpty { object["metadata"] = merged.mapValues(Self.json) }
        guard var line = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])
        else { return }
        line.append(0x0A)
        Self.output.withLock { _ in FileHandle.standardError.write(line) }
    }

    private static func json(_ value: Logger.Metadata.Value) -> Any {
        switch value {
        case .string(let text): text
        case .stringConvertible(let convertible): convertible.description
        case .array(let values): values.map(json)
        case .dictionary(let dictionary): dictionary.mapValues(json)
        }
    }
}
