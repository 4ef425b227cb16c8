import NIOCore

/// Runs a connection's tasks on the event loop that reads and writes its channel.
///
/// Hummingbird handles every connection in a task of its own, added to a task group by the task that
/// accepts connections. On NIO's event loops as the global executor (`anchorage serve`), a new task stays
/// on the loop it was started from, so every connection's task would run on the accepting loop: one core
/// doing every request's work while the other only moves bytes, and each request hopping between the two.
/// ``GuardedChannel`` runs each connection's task with this executor as its preference instead, which its
/// child tasks inherit.
final class EventLoopTaskExecutor: TaskExecutor {
    /// The loop the jobs run on.
    let eventLoop: any EventLoop

    /// An executor for the jobs of `eventLoop`'s channels.
    init(_ eventLoop: any EventLoop) {
        self.eventLoop = eventLoop
    }

    /// Runs `job` on the loop.
    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        eventLoop.execute { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}
