/// The overall deadline of the procedure the current task runs (a GATT discovery, a long
/// read or write): every request the task sends through an ``ATTClient`` ends by it, on
/// top of its own transaction timeout. A server answering each request just inside its
/// 30 s, one entry at a time, could otherwise stretch a discovery over days.
///
/// Set it with `ATTProcedureDeadline.$current.withValue(deadline) { ... }`; nil (the
/// default) leaves a request only its transaction timeout.
public enum ATTProcedureDeadline {
    @TaskLocal public static var current: ContinuousClock.Instant?
}
