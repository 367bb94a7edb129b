import PersistenceCore

/// Quotes an SQL identifier the way SQLite and PostgreSQL both read it: `"name"`, with inner quotes doubled.
package func quote(_ identifier: String) -> String {
    // By scalar, not Character: a quote followed by a combining mark is one Character but still a quote to SQL.
    var quoted = String.UnicodeScalarView()
    quoted.append("\"")
    for scalar in identifier.unicodeScalars {
        if scalar == "\"" { quoted.append(scalar) }
        quoted.append(scalar)
    }
    quoted.append("\"")
    return String(quoted)
}
