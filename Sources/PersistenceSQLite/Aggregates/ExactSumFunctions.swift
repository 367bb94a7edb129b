internal import CSQLite
import PersistenceCore

/// The aggregate functions the SQLite backend's sums and means use instead of SQLite's `sum` and `avg`, registered
/// on every connection: `sum` fails on the first partial sum that leaves `Int64` (so `[Int64.max, 1, -1]` failed
/// where `[1, -1, Int64.max]` didn't) and runs `Double`s to infinity past the largest one. These sum as
/// ``ExactSum`` does on every backend: only the total decides.
///
/// - `persistence_sum(x)`: `NULL` over no values; an integer when every value is one (failing with SQLite's own
///   "integer overflow" message when the total leaves `Int64`); a real otherwise (infinite only when the total
///   leaves `Double`, which the context refuses).
/// - `persistence_average(x)`: `NULL` over no values; the exact sum divided by the count, as a real.
enum ExactSumFunctions {
    static let sum = "persistence_sum"
    static let average = "persistence_average"

    /// Registers both functions on `db`; the result code of the first that fails, or `SQLITE_OK`.
    static func register(on db: OpaquePointer) -> Int32 {
        let flags = SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS
        let rc = sqlite3_create_function_v2(db, sum, 1, flags, nil, nil, step, finalSum, nil)
        guard rc == SQLITE_OK else { return rc }
        return sqlite3_create_function_v2(db, average, 1, flags, nil, nil, step, finalAverage, nil)
    }

    /// The running sum of one aggregate: in SQLite's aggregate context, zeroed on first use (which ``ExactSum``
    /// reads as empty), freed by SQLite when the aggregate ends; `nil` when nothing was added (`allocate` false) or
    /// SQLite is out of memory.
    private static func state(_ context: OpaquePointer?, allocate: Bool) -> UnsafeMutablePointer<ExactSum>? {
        let size = allocate ? Int32(MemoryLayout<ExactSum>.stride) : 0
        return sqlite3_aggregate_context(context, size)?.bindMemory(to: ExactSum.self, capacity: 1)
    }

    private static let step: @convention(c) (OpaquePointer?, Int32, UnsafeMutablePointer<OpaquePointer?>?) -> Void = {
        context, count, arguments in
        guard count == 1, let value = arguments?[0] else { return }
        let type = sqlite3_value_type(value)
        guard type != SQLITE_NULL else { return }
        guard let state = state(context, allocate: true) else {
            sqlite3_result_error_nomem(context)
            return
        }
        if type == SQLITE_INTEGER {
            state.pointee.add(sqlite3_value_int64(value))
        } else {
            // A real, or (not from an attribute of ours) text or a blob, read as a number as SQLite's sum does.
            state.pointee.add(sqlite3_value_double(value))
        }
    }

    private static let finalSum: @convention(c) (OpaquePointer?) -> Void = { context in
        guard let state = state(context, allocate: false), state.pointee.count > 0 else {
            sqlite3_result_null(context)
            return
        }
        guard state.pointee.isInteger else {
            sqlite3_result_double(context, state.pointee.realTotal)
            return
        }
        guard let total = state.pointee.integerTotal else {
            sqlite3_result_error(context, "integer overflow", -1)
            return
        }
        sqlite3_result_int64(context, total)
    }

    private static let finalAverage: @convention(c) (OpaquePointer?) -> Void = { context in
        guard let mean = state(context, allocate: false)?.pointee.mean else {
            sqlite3_result_null(context)
            return
        }
        sqlite3_result_double(context, mean)
    }
}
