import Foundation
import PersistenceCommands
import PersistenceCore
import PersistenceSQLite
import PersistenceTestProcesses
import PersistenceTesting
import Testing

/// CSV exports read back by a standard RFC 4180 reader — Python's `csv` module when there is a `python3`, and this
/// file's own byte-level reader always — give every string back, whatever follows a quote, comma or line break.
@Suite(.serialized)
struct CSVExportTests {
    /// Strings that trip an escaper working by `Character`: a quote, comma, CR or LF followed by a combining mark is
    /// one `Character` with it, and "\r\n" is one `Character`.
    static let labels: [String] = [
        "say \"\u{301}hi\"", "\"\u{301}", "\u{301}\"", ",\u{301}", "a,\u{301}b", "\n\u{301}", "\r\n", "a\rb",
        "x\"\u{20DD}y", "\"", "\"\"", "", "plain", "a,b", "\u{301}", "é\"", "👩‍👩‍👧,\"", " lead", "\u{0}nul",
        "line\nbreak", "\"\u{301}\r\n\u{301},\u{301}",
    ]

    @Test func everyFieldIsQuotedAndEscapedByByte() throws {
        #expect(CSVExport.field("say \"\u{301}hi\"") == "\"say \"\"\u{301}hi\"\"\"")
        #expect(CSVExport.field(",\u{301}") == "\",\u{301}\"")
        #expect(CSVExport.field("\r\n") == "\"\r\n\"")
        #expect(CSVExport.field("plain") == "plain")
        #expect(CSVExport.field("") == "\"\"")
        #expect(CSVExport.field(nil) == "")
        for label in Self.labels {
            #expect(try RFC4180.rows(Array(("k," + CSVExport.field(label) + "\n").utf8)) == [["k", label]])
        }
    }

    @Test func anExportReadsBackThroughAStandardReaderForEveryString() throws {
        try withTemporaryDirectory { directory in
            var builder = SQLiteBuilder(databaseName: "Labels", entities: [Tag.self])
            builder.directory = directory
            let db = try builder.create()
            let tags = Self.labels.enumerated().map { Tag(id: String(format: "k%02d", $0.offset), label: $0.element) }
            try db.create(tags)
            try db.close()
            let file = directory.appendingPathComponent("labels.csv")
            let export = try Tool.run(
                [
                    "export", directory.appendingPathComponent("Labels.sqlite").path, "--entity", "Tag", "--format",
                    "csv", "-o", file.path,
                ])
            #expect(export.status == 0, "\(export.errors)")
            let expected = [["id", "label"]] + tags.map { [$0.id, $0.label] }
            #expect(try RFC4180.rows(Array(Data(contentsOf: file))) == expected)
            if let python = try Self.pythonRows(file) {
                #expect(python == expected)
            }
        }
    }

    /// The rows Python's `csv` module (strict) reads from `file`, or `nil` when there is no `python3`.
    static func pythonRows(_ file: URL) throws -> [[String]]? {
        guard
            let python = ["/usr/bin/python3", "/usr/local/bin/python3", "/opt/homebrew/bin/python3"]
                .first(where: { FileManager.default.isExecutableFile(atPath: $0) })
        else { return nil }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: python)
        process.arguments = [
            "-c",
            "import csv, json, sys\n"
                + "with open(sys.argv[1], newline='', encoding='utf-8') as f:\n"
                + "    print(json.dumps(list(csv.reader(f, strict=True))))",
            file.path,
        ]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "Python's csv module refused the export")
        return try JSONDecoder().decode([[String]].self, from: data)
    }
}

/// An RFC 4180 reader over bytes, strict: a quote inside an unquoted field, or text after a closing quote, is an
/// error — what a reader that took a field for two, or two for one, would trip on.
enum RFC4180 {
    struct Malformed: Error {}

    static func rows(_ bytes: [UInt8]) throws -> [[String]] {
        var rows: [[String]] = []
        var row: [String] = []
        var field: [UInt8] = []
        var index = 0
        let quote = UInt8(ascii: "\"")
        let comma = UInt8(ascii: ",")
        let lf = UInt8(ascii: "\n")
        let cr = UInt8(ascii: "\r")
        func endField() {
            row.append(String(decoding: field, as: UTF8.self))
            field = []
        }
        while index < bytes.count {
            if field.isEmpty, bytes[index] == quote {
                index += 1
                while true {
                    guard index < bytes.count else { throw Malformed() }
                    if bytes[index] == quote {
                        if index + 1 < bytes.count, bytes[index + 1] == quote {
                            field.append(quote)
                            index += 2
                            continue
                        }
                        index += 1
                        break
                    }
                    field.append(bytes[index])
                    index += 1
                }
                guard index == bytes.count || [comma, lf, cr].contains(bytes[index]) else { throw Malformed() }
                continue
            }
            switch bytes[index] {
            case comma:
                endField()
            case lf, cr:
                endField()
                rows.append(row)
                row = []
                if bytes[index] == cr, index + 1 < bytes.count, bytes[index + 1] == lf { index += 1 }
            case quote:
                throw Malformed()
            default:
                field.append(bytes[index])
            }
            index += 1
        }
        if !field.isEmpty || !row.isEmpty {
            endField()
            rows.append(row)
        }
        return rows
    }
}
