import Foundation

extension Inspect {
    /// A detail's value in `inspect --json`: a size or a count as a JSON number, anything else as text.
    enum Detail: Encodable, Equatable {
        case number(Int64)
        case text(String)

        func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            switch self {
            case .number(let number): try container.encode(number)
            case .text(let text): try container.encode(text)
            }
        }

        /// The backends' details (`"45056 bytes (44.0 KiB)"`, `"11 of 4096 bytes"`, `"3"`) as JSON values: a size
        /// in bytes as its number of bytes; `pages` as the number of pages, with `page size` beside it; a count as
        /// its number; the rest as the text.
        static func values(_ details: [(label: String, value: String)]) -> [String: Detail] {
            var values: [String: Detail] = [:]
            for (label, value) in details {
                let words = value.split(separator: " ")
                if words.count >= 2, words[1] == "bytes", let bytes = Int64(words[0]) {
                    values[label] = .number(bytes)
                } else if label == "pages", words.count == 4, words[1] == "of", words[3] == "bytes",
                    let pages = Int64(words[0]), let size = Int64(words[2])
                {
                    values[label] = .number(pages)
                    values["page size"] = .number(size)
                } else if let count = Int64(value) {
                    values[label] = .number(count)
                } else {
                    values[label] = .text(value)
                }
            }
            return values
        }
    }
}
