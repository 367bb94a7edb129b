/// The record reader and writer of the layout used last: a transaction that reads or writes one entity again and
/// again (point lookups or inserts in a loop) reuses them instead of making them for every record.
package struct RecordCoders {
    private var reader: RecordReader?
    private var writer: RecordWriter?

    package init() {}

    package mutating func reader(for layout: RecordLayout) -> RecordReader {
        if let reader, reader.layout === layout { return reader }
        let made = RecordReader(layout: layout)
        reader = made
        return made
    }

    package mutating func writer(for layout: RecordLayout) -> RecordWriter {
        if let writer, writer.layout === layout { return writer }
        let made = RecordWriter(layout: layout)
        writer = made
        return made
    }
}
