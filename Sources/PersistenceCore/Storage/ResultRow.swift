/// One row of a raw SQL query (`SQLiteRow`, `PostgresResultRow`): its columns' names and values.
public struct ResultRow: Sendable, Hashable {
    /// The result columns' names.
    public let columns: [String]
    /// The values, in column order.
    public let values: [Value]

    /// A row of `values` under `columns` (as many of each).
    public init(columns: [String], values: [Value]) {
        self.columns = columns
        self.values = values
    }

    /// The value of the first column with this name, or `nil` when there is none.
    public subscript(_ column: String) -> Value? {
        columns.firstIndex(of: column).map { values[$0] }
    }

    /// The value at a column position.
    public subscript(_ index: Int) -> Value { values[index] }
}
