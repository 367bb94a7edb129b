import Foundation
@_spi(PersistenceBackend) import PersistenceCore
import PersistenceSQL

/// A vector attribute's elements beside its entity's table, so that the server ranks nearest neighbours: one `float4`
/// column a dimension (`e1`, `e2`, …), the record's key, and `squares` = Σ aᵢ² (in `Double`, in dimension order, from
/// zero: `VectorDistance`'s sum, computed once when the record is written).
///
/// PostgreSQL has no vector type without an extension (Debian 12 ships no pgvector), and decoding the stored bytes in
/// SQL costs milliseconds a record; but one expression over plain columns, `0 + e1 * $1 + e2 * $2 + …`, takes the
/// products and sums exactly as `VectorDistance` does — `float4 * float8` multiplies the element widened to `double`,
/// each `+` adds in order from zero — so the server's distances are the core's to the last bit. Measured at 100,000
/// vectors of 384 dimensions a query took ~0.6 s in the server (two parallel workers) where pulling every vector to the
/// client took ~1.2 s, and an array column unnested and summed took ~9 s.
///
/// The library writes the table with every record it writes (``PostgresStorage``); a deleted record's row goes with it
/// (`ON DELETE CASCADE`). Opening a store builds the tables from the stored vectors where they are missing — after a
/// migration, which drops them first. A stored value of another length (stored before the attribute was declared)
/// has a row with `squares` and the elements `NULL`, which a ranking meets first and refuses.
struct PostgresVectorTable: Sendable {
    /// The most dimensions a table holds: PostgreSQL allows 1,600 columns (and this fits a row in a page); an attribute
    /// of more is ranked by the client.
    static let maximumDimensions = 1_590
    /// Records per multi-row write.
    static let rowsPerStatement = 500

    /// The attribute's position in its entity's layout.
    let attribute: Int
    let dimensions: Int
    /// The entity's name and the attribute's: what the table is named after and errors say.
    let entity: String
    let name: String
    /// The table's unqualified name (`persistence_vec_` and a digest of the entity's and the attribute's names).
    let tableName: String
    /// The quoted, schema-qualified table.
    let table: String
    /// The column type of the entity's primary key.
    let keyType: String
    /// The writes of ``rowsPerStatement`` records and of one (what a record written alone runs), built once.
    private let fullUpsertSQL: String
    private let singleUpsertSQL: String

    /// The table of `vector`'s attribute of the entity `layout` describes, whose table is `entityTable`; `nil` past
    /// ``maximumDimensions``.
    init?(_ vector: VectorLayout, layout: RecordLayout, schema: String) {
        guard vector.dimensions <= Self.maximumDimensions else { return nil }
        attribute = vector.position
        dimensions = vector.dimensions
        entity = layout.entity.name
        name = vector.name
        tableName = PostgresStorage.digestName("persistence_vec_", entity + "\0" + name)
        table = quote(schema) + "." + quote(tableName)
        keyType = PostgresTable.columnType(layout.types[layout.primaryKeyIndex])
        fullUpsertSQL = Self.upsertSQL(
            table: table, keyType: keyType, dimensions: dimensions, rows: Self.rowsPerStatement)
        singleUpsertSQL = Self.upsertSQL(table: table, keyType: keyType, dimensions: dimensions, rows: 1)
    }

    /// `CREATE TABLE` for the table, its key referring to the entity's table `entityTable`.
    func creationSQL(entityTable: PostgresTable) -> String {
        let elements = (1...dimensions).map { "e\($0) real" }.joined(separator: ", ")
        return "CREATE TABLE \(table) (key \(keyType) NOT NULL PRIMARY KEY REFERENCES \(entityTable.table) "
            + "(\(entityTable.primaryKeyColumn)) ON DELETE CASCADE, squares double precision, \(elements))"
    }

    /// Writes (or replaces) the rows of `rows` records: each binds its key, `squares` (`float8`) and its elements
    /// (`real[]`, one per column), or `NULL` twice for a stored value that is no vector. Every parameter is cast:
    /// the statement is prepared without its parameters' types.
    func upsertSQL(rows: Int) -> String {
        switch rows {
        case Self.rowsPerStatement: fullUpsertSQL
        case 1: singleUpsertSQL
        default: Self.upsertSQL(table: table, keyType: keyType, dimensions: dimensions, rows: rows)
        }
    }

    private static func upsertSQL(table: String, keyType: String, dimensions: Int, rows: Int) -> String {
        let tuples = (0..<rows).map {
            "($\($0 * 3 + 1)::\(keyType), $\($0 * 3 + 2)::float8, $\($0 * 3 + 3)::real[])"
        }
        let elements = (1...dimensions).map { "e\($0)" }
        return "INSERT INTO \(table) (key, squares, \(elements.joined(separator: ", "))) SELECT v.k, v.s, "
            + (1...dimensions).map { "v.a[\($0)]" }.joined(separator: ", ")
            + " FROM (VALUES \(tuples.joined(separator: ", "))) AS v (k, s, a) ON CONFLICT (key) DO UPDATE SET "
            + (["squares"] + elements).map { "\($0) = excluded.\($0)" }.joined(separator: ", ")
    }

    /// Deletes the rows of `keys` records (their vector is `nil`).
    func deleteSQL(keys: Int) -> String {
        "DELETE FROM \(table) WHERE key IN (" + (1...keys).map { "$\($0)" }.joined(separator: ", ") + ")"
    }

    /// The distance `distance` defines, as SQL over the table's columns (alias `s`), the query's elements bound from
    /// `$first` on (`float8`) and, for cosine, its norm after them: the same operations in the same order as
    /// `VectorDistance.distance(dot:squares:differences:)`.
    static func distanceSQL(_ metric: VectorMetric, dimensions: Int, first: Int) -> String {
        let parameters = (0..<dimensions).map { "$\(first + $0)" }
        switch metric {
        case .dotProduct:
            return "-(" + dot(parameters) + ")"
        case .cosine:
            // `norms == 0 ? 1 : 1 - dot / norms`: a zero norm is NULL to the division, and the result then 1.
            return "coalesce(1::float8 - (\(dot(parameters))) / nullif(sqrt(s.squares) * $\(first + dimensions), "
                + "0::float8), 1::float8)"
        case .euclidean:
            // `float4 - float8` widens the element, then subtracts; the difference is squared by multiplying.
            let terms = parameters.enumerated().map { index, parameter in
                "(s.e\(index + 1) - \(parameter)) * (s.e\(index + 1) - \(parameter))"
            }
            return "sqrt(0::float8 + " + terms.joined(separator: " + ") + ")"
        }
    }

    /// Σ aᵢqᵢ from zero in dimension order: `float4 * float8` widens the element, then multiplies.
    private static func dot(_ parameters: [String]) -> String {
        "0::float8 + " + parameters.enumerated().map { "s.e\($0.offset + 1) * \($0.element)" }.joined(separator: " + ")
    }

    /// A stored vector's elements and Σ aᵢ² (from zero, in dimension order, in `Double`), or `nil` when `value` holds
    /// no vector of the table's dimensions.
    func elements(of value: Value) -> (squares: Double, elements: [Float])? {
        guard case .blob(let data) = value, data.count == dimensions * 4 else { return nil }
        var squares = 0.0
        let elements = data.withUnsafeBytes { bytes in
            (0..<dimensions).map { index in
                let element = Float(
                    bitPattern: UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: index * 4, as: UInt32.self)))
                squares += Double(element) * Double(element)
                return element
            }
        }
        return (squares, elements)
    }
}
