extension StringProtocol {
    /// The text without leading and trailing spaces and tabs (HTTP's optional white space).
    var trimmedOfHTTPWhitespace: String {
        var slice = Substring(self)
        while let first = slice.first, first == " " || first == "\t" { slice.removeFirst() }
        while let last = slice.last, last == " " || last == "\t" { slice.removeLast() }
        return String(slice)
    }
}
