import SyncCore

/// A fault ``FaultInjectingMiddleware`` injects into one request.
public enum TransportFault: Sendable, Hashable, CustomStringConvertible {
    /// The request never reaches the server; the client gets a
    /// ``SyncCore/TransportError`` (connection failed).
    case drop
    /// The server gets the request twice, one after the other; the client
    /// gets the answer to the first.
    case duplicate
    /// The request waits `Duration` on the middleware's clock before it is sent.
    case delay(Duration)
    /// The request is held and sent after the next request has been answered.
    case reorder
    /// The server processes the request, but the connection is cut before the
    /// answer arrives: the client gets a ``SyncCore/TransportError`` (the lost answer).
    case cutAfterProcessing
    /// The client gets an answer with this status (a 5xx) without the request
    /// reaching the server, as from a failing proxy or an overloaded server.
    case serverError(status: Int)

    /// The fault's name, with its parameter.
    public var description: String {
        switch self {
        case .drop: "drop"
        case .duplicate: "duplicate"
        case .delay(let duration): "delay(\(duration))"
        case .reorder: "reorder"
        case .cutAfterProcessing: "cutAfterProcessing"
        case .serverError(let status): "serverError(\(status))"
        }
    }
}

/// Which fault, if any, each request gets: a script, or a seeded random choice.
///
/// ```swift
/// let scripted = FaultPlan.scripted([nil, .drop, .cutAfterProcessing])   // 2nd and 3rd requests fail
/// let random = FaultPlan.random(seed: 7, probability: 0.2, faults: [.drop, .duplicate, .serverError(status: 503)])
/// ```
/// The same plan gives the same faults for the same sequence of requests.
public struct FaultPlan: Sendable {
    private enum Source: Sendable {
        case scripted([TransportFault?])
        case random(generator: SeededGenerator, probability: Double, faults: [TransportFault])
    }

    private var source: Source
    private var index = 0

    private init(_ source: Source) { self.source = source }

    /// The `n`-th request gets `faults[n]` (`nil`: none); requests after the script get none.
    public static func scripted(_ faults: [TransportFault?]) -> FaultPlan { FaultPlan(.scripted(faults)) }

    /// Each request gets, with `probability` (0…1), a fault picked evenly from
    /// `faults`, drawn from a generator seeded with `seed`.
    public static func random(seed: UInt64, probability: Double, faults: [TransportFault]) -> FaultPlan {
        FaultPlan(.random(generator: SeededGenerator(seed: seed), probability: probability, faults: faults))
    }

    /// No request gets a fault.
    public static var noFaults: FaultPlan { .scripted([]) }

    /// The fault for the next request, and the plan moved past it.
    mutating func next() -> TransportFault? {
        defer { index += 1 }
        switch source {
        case .scripted(let faults):
            return index < faults.count ? faults[index] : nil
        case .random(var generator, let probability, let faults):
            let draw = Double(generator.next() >> 11) / Double(UInt64(1) << 53)
            let pick = Int(generator.next() % UInt64(max(1, faults.count)))
            source = .random(generator: generator, probability: probability, faults: faults)
            guard draw < probability, !faults.isEmpty else { return nil }
            return faults[pick]
        }
    }
}

/// How many requests ``FaultInjectingMiddleware`` saw and what it did to them.
public struct FaultCounts: Sendable, Hashable {
    /// Requests the plan applied to.
    public var requests = 0
    /// Requests sent on unchanged.
    public var passedThrough = 0
    /// Requests dropped.
    public var dropped = 0
    /// Requests sent twice.
    public var duplicated = 0
    /// Requests delayed.
    public var delayed = 0
    /// Requests held and sent after the next one.
    public var reordered = 0
    /// Requests whose answer was cut off.
    public var cutAfterProcessing = 0
    /// Requests answered with an injected server error.
    public var serverErrors = 0

    /// Makes counts, all zero unless given.
    public init(
        requests: Int = 0, passedThrough: Int = 0, dropped: Int = 0, duplicated: Int = 0, delayed: Int = 0,
        reordered: Int = 0, cutAfterProcessing: Int = 0, serverErrors: Int = 0
    ) {
        self.requests = requests
        self.passedThrough = passedThrough
        self.dropped = dropped
        self.duplicated = duplicated
        self.delayed = delayed
        self.reordered = reordered
        self.cutAfterProcessing = cutAfterProcessing
        self.serverErrors = serverErrors
    }

    /// Requests that got a fault.
    public var faults: Int { requests - passedThrough }

    mutating func record(_ fault: TransportFault?) {
        requests += 1
        switch fault {
        case nil: passedThrough += 1
        case .drop: dropped += 1
        case .duplicate: duplicated += 1
        case .delay: delayed += 1
        case .reorder: reordered += 1
        case .cutAfterProcessing: cutAfterProcessing += 1
        case .serverError: serverErrors += 1
        }
    }
}

/// One request ``FaultInjectingMiddleware`` saw and the fault it got.
public struct FaultEvent: Sendable, Hashable, CustomStringConvertible {
    /// The request's number among those the plan applied to, from 0.
    public var index: Int
    /// The request's path.
    public var path: String
    /// The fault injected, or `nil` when the request passed through.
    public var fault: TransportFault?

    /// Makes an event.
    public init(index: Int, path: String, fault: TransportFault?) {
        self.index = index
        self.path = path
        self.fault = fault
    }

    /// `#index path: fault`.
    public var description: String { "#\(index) \(path): \(fault.map(String.init(describing:)) ?? "passed")" }
}
