/// A last-in, first-out store of the values (or keys) read so far whose open
/// container has not ended yet; a container's elements are moved out in one go
/// when it ends, without copying, retaining or releasing them one by one.
///
/// One stack serves every open container: each remembers where its elements
/// start, and elements above that point belong to it.
struct PlistStack<Element>: ~Copyable {
    // Slots `0..<count` are initialized; `count..<capacity` are not.
    private var base: UnsafeMutablePointer<Element>
    private var capacity: Int
    /// How many elements the stack holds.
    private(set) var count = 0

    /// An empty stack with room for `capacity` elements before it grows.
    init(capacity: Int) {
        self.capacity = max(capacity, 1)
        base = .allocate(capacity: self.capacity)
    }

    deinit {
        base.deinitialize(count: count)
        base.deallocate()
    }

    /// The element at `index` (`0..<count`).
    subscript(index: Int) -> Element {
        precondition(index >= 0 && index < count)
        return base[index]
    }

    /// The top element (the stack must not be empty).
    var last: Element {
        precondition(count > 0)
        return base[count - 1]
    }

    /// Changes the top element in place (the stack must not be empty).
    mutating func updateLast(_ change: (inout Element) -> Void) {
        precondition(count > 0)
        change(&base[count - 1])
    }

    /// Adds `element` on top.
    mutating func push(_ element: consuming Element) {
        if count == capacity { grow() }
        (base + count).initialize(to: element)
        count += 1
    }

    /// Removes and returns the top element.
    mutating func pop() -> Element {
        precondition(count > 0)
        count -= 1
        return (base + count).move()
    }

    /// Removes the elements from `start` to the top and returns them as an array, in order.
    mutating func popArray(from start: Int) -> [Element] {
        precondition(start >= 0 && start <= count)
        let moved = count - start
        guard moved > 0 else { return [] }
        let source = base + start
        // The slots are moved (not copied) into the array and then counted as uninitialized
        // here, so each element keeps its single reference and nothing is released twice.
        let result = [Element](unsafeUninitializedCapacity: moved) { buffer, initialized in
            buffer.baseAddress!.moveInitialize(from: source, count: moved)
            initialized = moved
        }
        count = start
        return result
    }

    /// Whether an element from `start` to the top satisfies `predicate`.
    func contains(from start: Int, where predicate: (borrowing Element) -> Bool) -> Bool {
        precondition(start >= 0 && start <= count)
        for index in start..<count where predicate(base[index]) { return true }
        return false
    }

    /// Removes the elements from `start` to the top, handing them to `body`, which
    /// must move every one of them out of the buffer (`moveElement(from:)` or
    /// `moveInitialize`), as it then owns them.
    mutating func popMovingOut<Result>(from start: Int, _ body: (UnsafeMutableBufferPointer<Element>) -> Result) -> Result {
        precondition(start >= 0 && start <= count)
        let end = count
        // Lower `count` first: the slots belong to `body` now and must not be
        // deinitialized again here (in `deinit`, or by a later `push` over them).
        count = start
        return body(UnsafeMutableBufferPointer(start: base + start, count: end - start))
    }

    private mutating func grow() {
        let larger = capacity * 2
        let moved = UnsafeMutablePointer<Element>.allocate(capacity: larger)
        moved.moveInitialize(from: base, count: count)
        base.deallocate()
        base = moved
        capacity = larger
    }
}
