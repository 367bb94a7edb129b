import Foundation

/// The states of a directory a power cut could leave at each point of a trace, in a model of the file system
/// (``UnsyncedChanges/Model``): what every sync before the cut made durable, with the changes not yet synced each
/// kept, dropped or (a write of more than a page) torn.
///
/// Files are followed by identity, not by name: a write lands in the file its descriptor's name named then, wherever
/// a later rename moves it. A state is the durable names and contents with a chosen set of the pending changes
/// applied in trace order; a change to a file whose creation the state dropped changes nothing.
struct CrashStates {
    /// One state: the files by path (relative to the traced directory) and the directories.
    struct State: Hashable {
        var files: [String: [UInt8]]
        var directories: Set<String>
    }

    /// A state and where it comes from: the cut (operations applied before it), how many acknowledgements the
    /// process had written by then, and which choice of pending changes made it.
    struct Cut {
        var operations: Int
        var acknowledgements: Int
        var choice: String
        var state: State
    }

    /// A change not yet durable.
    private enum Change {
        /// Bytes written into a file (by identity) at an offset; a truncation to a length.
        case write(file: Int, offset: Int, bytes: [UInt8])
        case truncate(file: Int, length: Int)
        /// A name: made, moved, linked, removed; a directory made or removed.
        case create(path: String, file: Int)
        case rename(from: String, to: String)
        case link(from: String, to: String)
        case unlink(path: String)
        case makeDirectory(path: String)
        case removeDirectory(path: String)

        var label: String {
            switch self {
            case .write(let file, let offset, let bytes): "write of \(bytes.count) bytes at \(offset) to file \(file)"
            case .truncate(let file, let length): "truncation of file \(file) to \(length)"
            case .create(let path, let file): "creation of \(path) (file \(file))"
            case .rename(let from, let to): "rename of \(from) to \(to)"
            case .link(let from, let to): "link of \(from) as \(to)"
            case .unlink(let path): "unlink of \(path)"
            case .makeDirectory(let path): "mkdir \(path)"
            case .removeDirectory(let path): "rmdir \(path)"
            }
        }

        var isName: Bool {
            switch self {
            case .write, .truncate: false
            default: true
            }
        }

        /// The file a data change is to.
        var file: Int? {
            switch self {
            case .write(let file, _, _), .truncate(let file, _): file
            default: nil
            }
        }

        /// The directory a name change is in (both, for a move).
        var directories: [String] {
            func parent(_ path: String) -> String {
                guard let slash = path.lastIndex(of: "/") else { return "." }
                return String(path[..<slash])
            }
            switch self {
            case .write, .truncate: return []
            case .create(let path, _), .unlink(let path), .makeDirectory(let path), .removeDirectory(let path):
                return [parent(path)]
            case .rename(let from, let to), .link(let from, let to): return [parent(from), parent(to)]
            }
        }
    }

    /// Names and contents, with files by identity.
    private struct FileSystem {
        var names: [String: Int] = [:]
        var contents: [Int: [UInt8]] = [:]
        var directories: Set<String> = ["."]

        /// Applies `change`; of a write, only the parts in the pages `page` accepts (all by default).
        mutating func apply(_ change: Change, pages page: (Int) -> Bool = { _ in true }) {
            switch change {
            case .write(let file, let offset, let bytes):
                // A file no name names (its creation dropped) is never in a state, whatever it holds.
                guard !bytes.isEmpty else { return }
                var data = contents[file] ?? []
                for index in CrashStates.pages(offset: offset, count: bytes.count) where page(index) {
                    let start = max(offset, index * CrashStates.pageSize)
                    let end = min(offset + bytes.count, (index + 1) * CrashStates.pageSize)
                    if data.count < end { data += [UInt8](repeating: 0, count: end - data.count) }
                    data.replaceSubrange(start..<end, with: bytes[(start - offset)..<(end - offset)])
                }
                contents[file] = data
            case .truncate(let file, let length):
                var data = contents[file] ?? []
                if data.count > length {
                    data.removeSubrange(length...)
                } else {
                    data += [UInt8](repeating: 0, count: length - data.count)
                }
                contents[file] = data
            case .create(let path, let file):
                names[path] = file
                if contents[file] == nil { contents[file] = [] }
            case .rename(let from, let to):
                if let file = names.removeValue(forKey: from) {
                    names[to] = file
                } else if directories.remove(from) != nil {
                    directories.insert(to)
                }
            case .link(let from, let to):
                if let file = names[from] { names[to] = file }
            case .unlink(let path):
                names[path] = nil
            case .makeDirectory(let path):
                directories.insert(path)
            case .removeDirectory(let path):
                directories.remove(path)
            }
        }

        /// The state: every named file's contents.
        var state: State {
            var files: [String: [UInt8]] = [:]
            for (path, file) in names { files[path] = contents[file] ?? [] }
            return State(files: files, directories: directories)
        }
    }

    /// The page a torn write is cut at, and the unit the disk holds a file's contents in.
    static let pageSize = 4_096

    /// The pages `count` bytes at `offset` touch.
    static func pages(offset: Int, count: Int) -> ClosedRange<Int> {
        (offset / pageSize)...((offset + max(count, 1) - 1) / pageSize)
    }

    /// Every state of `trace` under `model`, the traced directory empty before it began (unique states only, each
    /// with the first cut that made it). `ignoring` names files the store rebuilds (never in a state).
    static func states(of trace: FileTrace, model: UnsyncedChanges.Model, ignoring: (String) -> Bool) throws -> [Cut] {
        var durable = FileSystem()
        var current = FileSystem()
        var pending: [Change] = []
        var nextFile = 0
        var acknowledgements = 0
        var output = ""
        var seen: Set<State> = []
        var cuts: [Cut] = []

        func keep(_ choice: String, _ state: State, at index: Int) {
            var state = state
            state.files = state.files.filter { !ignoring($0.key) }
            guard seen.insert(state).inserted else { return }
            cuts.append(Cut(operations: index, acknowledgements: acknowledgements, choice: choice, state: state))
        }

        /// The states at this cut. The disk holds each page of a file as the page cache held it at some moment
        /// since the file's last sync — a prefix of the pending writes to that page, never a later write without an
        /// earlier one to the same page — and names as the model allows (ext4: a prefix of the journal; POSIX: any
        /// of them). Chosen: nothing pending; everything; each pending change dropped (with the later writes to its
        /// pages, or on ext4 the later names); each kept alone (with the earlier writes to its pages, or the earlier
        /// names); each write of more than a page torn (its first page only; all but its first page).
        func cut(at index: Int) {
            keep("durable", durable.state, at: index)
            keep("everything", current.state, at: index)
            let ordered = model == .ext4Ordered
            /// The state with the pending changes `included` accepts (a data change's pages asked one by one).
            func state(_ included: (Int, Change, Int?) -> Bool) -> State {
                var system = durable
                for (position, change) in pending.enumerated() {
                    if change.isName {
                        if included(position, change, nil) { system.apply(change) }
                    } else if case .write = change {
                        system.apply(change) { included(position, change, $0) }
                    } else if included(position, change, -1) {
                        system.apply(change)
                    }
                }
                return system.state
            }
            /// The pages (of a file; -1: its length) a data change touches.
            func touched(_ change: Change) -> Set<Int> {
                switch change {
                case .write(_, let offset, let bytes): Set(CrashStates.pages(offset: offset, count: bytes.count))
                case .truncate: [-1]
                default: []
                }
            }
            for (chosen, choice) in pending.enumerated() {
                let pages = touched(choice)
                let shares = { (change: Change, page: Int?) -> Bool in
                    guard let page, change.file == choice.file else { return false }
                    return pages.contains(page)
                }
                keep(
                    "all but #\(chosen) (\(choice.label); \(pending.count) pending)",
                    state { position, change, page in
                        if choice.isName {
                            return !(position == chosen || (ordered && change.isName && position > chosen))
                        }
                        return !(shares(change, page) && position >= chosen)
                    }, at: index)
                keep(
                    "only #\(chosen) (\(choice.label))",
                    state { position, change, page in
                        if choice.isName {
                            return position == chosen || (ordered && change.isName && position < chosen)
                        }
                        return shares(change, page) && position <= chosen
                    }, at: index)
                guard case .write(_, let offset, let bytes) = choice, bytes.count > CrashStates.pageSize else {
                    continue
                }
                let first = offset / CrashStates.pageSize
                for (label, reached) in [
                    ("first page", { (page: Int) in page == first }), ("all but its first page", { $0 != first }),
                ] {
                    keep(
                        "#\(chosen) (\(choice.label)) torn: \(label)",
                        state { position, change, page in
                            guard shares(change, page), position >= chosen, let page else { return true }
                            return position == chosen && reached(page)
                        }, at: index)
                }
            }
        }

        /// A write through a synchronous descriptor: the disk holds those pages of the file as the page cache does
        /// now (earlier writes to them included), and no pending write can take them back.
        func syncPages(_ file: Int, _ pages: ClosedRange<Int>) {
            let source = current.contents[file] ?? []
            var target = durable.contents[file] ?? []
            for page in pages {
                let start = page * pageSize
                let end = min((page + 1) * pageSize, source.count)
                guard start < end else { continue }
                if target.count < end { target += [UInt8](repeating: 0, count: end - target.count) }
                target.replaceSubrange(start..<end, with: source[start..<end])
            }
            durable.contents[file] = target
            pending = pending.flatMap { change -> [Change] in
                guard case .write(let written, let offset, let bytes) = change, written == file else { return [change] }
                // What the write put outside those pages, in runs.
                var runs: [Change] = []
                for page in CrashStates.pages(offset: offset, count: bytes.count) where !pages.contains(page) {
                    let start = max(offset, page * pageSize)
                    let end = min(offset + bytes.count, (page + 1) * pageSize)
                    if case .write(_, let runOffset, let run)? = runs.last, runOffset + run.count == start {
                        runs[runs.count - 1] = .write(
                            file: file, offset: runOffset, bytes: run + bytes[(start - offset)..<(end - offset)])
                    } else {
                        runs.append(
                            .write(file: file, offset: start, bytes: Array(bytes[(start - offset)..<(end - offset)])))
                    }
                }
                return runs
            }
        }

        /// Makes durable the pending changes `durableNow` accepts, keeping the others' order.
        func settle(_ durableNow: (Change) -> Bool) {
            var left: [Change] = []
            for change in pending {
                if durableNow(change) { durable.apply(change) } else { left.append(change) }
            }
            pending = left
        }

        for (index, operation) in trace.operations.enumerated() {
            cut(at: index)
            let path = operation.path
            guard !ignoring(path) || operation.kind == .output || operation.kind == .sync else { continue }
            var changes: [Change] = []
            switch operation.kind {
            case .open:
                if operation.flags.contains(.directory) {
                    // A directory opened to be synced: one made before the trace began is durable as it is.
                    if !current.directories.contains(path) {
                        current.directories.insert(path)
                        durable.directories.insert(path)
                    }
                    continue
                }
                if operation.flags.contains(.created), current.names[path] == nil {
                    changes.append(.create(path: path, file: nextFile))
                    nextFile += 1
                }
                if operation.flags.contains(.truncated), let file = current.names[path] {
                    changes.append(.truncate(file: file, length: 0))
                }
            case .write:
                guard let file = current.names[path] else { throw UntracedFile(path: path) }
                changes.append(.write(file: file, offset: Int(operation.offset), bytes: [UInt8](operation.data)))
            case .truncate:
                guard let file = current.names[path] else { throw UntracedFile(path: path) }
                changes.append(.truncate(file: file, length: Int(operation.length)))
            case .allocate:
                // Mode 0 grows the file to cover the range; other modes (punching holes, …) are not modelled.
                guard operation.flags.rawValue == 0 else { throw Unmodelled(operation: "fallocate mode") }
                guard let file = current.names[path] else { throw UntracedFile(path: path) }
                let end = Int(operation.offset + operation.length)
                if (current.contents[file]?.count ?? 0) < end { changes.append(.truncate(file: file, length: end)) }
            case .rename:
                guard !operation.path.isEmpty, !operation.target.isEmpty else {
                    throw Unmodelled(operation: "a rename across the traced directory's edge")
                }
                changes.append(.rename(from: path, to: operation.target))
            case .link:
                guard !operation.path.isEmpty, !operation.target.isEmpty else {
                    throw Unmodelled(operation: "a link across the traced directory's edge")
                }
                changes.append(.link(from: path, to: operation.target))
            case .unlink:
                changes.append(.unlink(path: path))
            case .makeDirectory:
                changes.append(.makeDirectory(path: path))
            case .removeDirectory:
                changes.append(.removeDirectory(path: path))
            case .sync:
                if path.isEmpty {
                    settle { _ in true }
                } else if let file = current.names[path] {
                    // The file's data; on ext4 the journal's names too (a sync commits it).
                    settle { change in change.file == file || (model == .ext4Ordered && change.isName) }
                } else if current.directories.contains(path) {
                    settle { change in
                        change.isName && (model == .ext4Ordered || change.directories.contains(path))
                    }
                }
                continue
            case .output:
                output += String(decoding: operation.data, as: UTF8.self)
                while let newline = output.firstIndex(of: "\n") {
                    if output[..<newline].hasPrefix("ack ") { acknowledgements += 1 }
                    output.removeSubrange(...newline)
                }
                continue
            case .mapped:
                // Writes through memory are not in the trace: only files the store rebuilds may be mapped.
                guard ignoring(path) else { throw Unmodelled(operation: "a writable mapping of \(path)") }
                continue
            }
            for change in changes {
                current.apply(change)
                if operation.flags.contains(.synchronous), case .write(let file, let offset, let bytes) = change {
                    syncPages(file, CrashStates.pages(offset: offset, count: bytes.count))
                } else {
                    pending.append(change)
                }
            }
        }
        cut(at: trace.operations.count)
        return cuts
    }

    struct UntracedFile: Error, CustomStringConvertible {
        let path: String
        var description: String { "the trace changes \(path), which it never saw opened" }
    }

    struct Unmodelled: Error, CustomStringConvertible {
        let operation: String
        var description: String { "the crash states don't model \(operation)" }
    }

    /// Writes `state` into `directory` (which must be empty).
    static func materialize(_ state: State, in directory: URL) throws {
        let manager = FileManager.default
        for path in state.directories.sorted() where path != "." {
            try manager.createDirectory(
                at: directory.appendingPathComponent(path), withIntermediateDirectories: true)
        }
        for (path, bytes) in state.files {
            let url = directory.appendingPathComponent(path)
            try manager.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data(bytes).write(to: url)
        }
    }
}
