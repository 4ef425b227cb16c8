/// One row of the ratio report: an Anchorage codec against a peer in one
/// direction, with the speed the issue asks for, if any.
public struct Comparison: Sendable {
    /// The Anchorage codec.
    public let ours: CodecSubject
    /// What it is measured against.
    public let peer: CodecSubject
    /// Encode or decode.
    public let direction: CodecDirection
    /// The least speed ratio (peer time / our time) that meets the target; `nil` for information only.
    public let target: Double?

    /// The speed ratio (peer time / our time) of `ours` against `peer` on `shape`, timing each
    /// the best of `repetitions` runs after a warm-up.
    public func ratio(on shape: BenchmarkShape, repetitions: Int) throws -> (ours: Timing, peer: Timing, ratio: Double) {
        let ourTiming = try Timing.best(of: repetitions, CodecOperation(ours, direction, shape))
        let peerTiming = try Timing.best(of: repetitions, CodecOperation(peer, direction, shape))
        return (ourTiming, peerTiming, peerTiming.seconds / ourTiming.seconds)
    }

    /// Every comparison the report makes, targets first within each codec.
    public static let all: [Comparison] = [
        Comparison(ours: .anchorageXMLPlist, peer: .libxml2SAX2, direction: .decode, target: 0.5),
        Comparison(ours: .anchorageXMLPlist, peer: .propertyListCoderXML, direction: .encode, target: 2),
        Comparison(ours: .anchorageXMLPlist, peer: .propertyListCoderXML, direction: .decode, target: nil),
        Comparison(ours: .anchorageXMLPlist, peer: .propertyListSerializationXML, direction: .encode, target: nil),
        Comparison(ours: .anchorageXMLPlist, peer: .propertyListSerializationXML, direction: .decode, target: nil),
        Comparison(ours: .anchorageBinaryPlist, peer: .propertyListCoderBinary, direction: .encode, target: 4),
        Comparison(ours: .anchorageBinaryPlist, peer: .propertyListCoderBinary, direction: .decode, target: 4),
        Comparison(ours: .anchorageBinaryPlist, peer: .propertyListSerializationBinary, direction: .encode, target: nil),
        Comparison(ours: .anchorageBinaryPlist, peer: .propertyListSerializationBinary, direction: .decode, target: nil),
        Comparison(ours: .anchorageJSON, peer: .jsonCoder, direction: .encode, target: 2),
        Comparison(ours: .anchorageJSON, peer: .jsonCoder, direction: .decode, target: 2),
        Comparison(ours: .anchorageJSON, peer: .jsonSerialization, direction: .encode, target: nil),
        Comparison(ours: .anchorageJSON, peer: .jsonSerialization, direction: .decode, target: nil),
        Comparison(ours: .anchorageMessagePack, peer: .msgpackC, direction: .encode, target: 0.5),
        Comparison(ours: .anchorageMessagePackDocument, peer: .msgpackC, direction: .decode, target: 0.5),
        Comparison(ours: .anchorageMessagePack, peer: .msgpackC, direction: .decode, target: nil),
    ]
}

/// How a measured ratio stands against its target.
public enum Verdict: CustomStringConvertible {
    /// The ratio reaches the target.
    case met
    /// The ratio falls short by this share of the target.
    case missed(byPercent: Double)
    /// There is no target.
    case informational

    /// The verdict on `ratio` against `target` (`nil`: no target).
    public init(ratio: Double, target: Double?) {
        guard let target else {
            self = .informational
            return
        }
        self = ratio >= target ? .met : .missed(byPercent: (target - ratio) / target * 100)
    }

    /// Whether the target was missed.
    public var isMissed: Bool {
        if case .missed = self { return true }
        return false
    }

    public var description: String {
        switch self {
        case .met: "met"
        case .missed(let percent): "missed by \(format(percent, digits: 0))%"
        case .informational: "—"
        }
    }
}

/// `value` with `digits` digits after the point.
public func format(_ value: Double, digits: Int) -> String {
    guard value.isFinite else { return "–" }
    var scaled = (value * pow10(digits)).rounded() / pow10(digits)
    if scaled == 0 { scaled = 0 }
    let text = String(scaled)
    let parts = text.split(separator: ".", maxSplits: 1)
    let whole = String(parts[0])
    guard digits > 0 else { return whole }
    let fraction = parts.count > 1 ? String(parts[1]) : ""
    return whole + "." + String((fraction + String(repeating: "0", count: digits)).prefix(digits))
}

private func pow10(_ digits: Int) -> Double {
    (0..<digits).reduce(1) { result, _ in result * 10 }
}
