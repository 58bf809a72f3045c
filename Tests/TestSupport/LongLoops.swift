/// Long CPU-bound loops in tests (fuzzing, random walks) call this on every iteration.
///
/// Tests run in parallel on the cooperative pool, which has one thread per core (two on our
/// machines). A synchronous loop that computes for seconds holds its thread all that time,
/// and with two of them running nothing else moves: a timer that fired, a continuation that
/// was resumed, wait in the queue behind them (a 2 s ATT transaction timeout took 46-77 s in
/// the full run). Yielding every `period` iterations puts the rest of the run back in line.
@inlinable
public func yieldPeriodically(every period: Int = 1_000, iteration: Int) async {
    if iteration % period == 0 { await Task.yield() }
}
