import PersistenceCore
import Testing

extension RelationshipChecks {
    /// The graph as the rules say it should be, computed in plain Swift: what the randomized check compares the
    /// store with after every step.
    struct ReferenceGraph: Equatable {
        var parents: [Int64: String] = [:]
        var cascading: [Int64: Int64?] = [:]
        var nullifying: [Int64: Int64?] = [:]
        var denying: [Int64: Int64?] = [:]
        var untouched: [Int64: Int64?] = [:]
        var grandchildren: [Int64: Int64] = [:]
        var nodes: [String: String?] = [:]

        /// Deletes parents by the rules; `false` (and no change) when a deny refuses.
        mutating func deleteParents(_ ids: Set<Int64>) -> Bool {
            let children = Set(cascading.filter { $0.value.map(ids.contains) == true }.keys)
            guard denying.values.allSatisfy({ $0.map(ids.contains) != true }),
                grandchildren.values.allSatisfy({ !children.contains($0) })
            else { return false }
            for id in ids { parents[id] = nil }
            for id in children { cascading[id] = nil }
            for (id, parent) in nullifying where parent.map(ids.contains) == true { nullifying[id] = .some(nil) }
            return true
        }

        /// Deletes a cascading child; `false` when a grandchild denies it.
        mutating func deleteChild(_ id: Int64) -> Bool {
            guard !grandchildren.values.contains(id) else { return false }
            cascading[id] = nil
            return true
        }

        /// Deletes a node and every node below it (cascade), cycles included.
        mutating func deleteNode(_ id: String) {
            var doomed: Set<String> = [id]
            var frontier = [id]
            while let next = frontier.popLast() {
                for (child, parent) in nodes where parent == next && doomed.insert(child).inserted {
                    frontier.append(child)
                }
            }
            for node in doomed { nodes[node] = nil }
        }

        /// The store's contents as a reference graph.
        static func read(_ db: some Database) throws -> ReferenceGraph {
            var graph = ReferenceGraph()
            for parent in try db.recover(G.Parent.self) { graph.parents[parent.id] = parent.name }
            for child in try db.recover(G.CascadeChild.self) { graph.cascading[child.id] = .some(child.parentID) }
            for child in try db.recover(G.NullifyChild.self) { graph.nullifying[child.id] = .some(child.parentID) }
            for child in try db.recover(G.DenyChild.self) { graph.denying[child.id] = .some(child.parentID) }
            for child in try db.recover(G.NoActionChild.self) { graph.untouched[child.id] = .some(child.parentID) }
            for child in try db.recover(G.Grandchild.self) { graph.grandchildren[child.id] = child.childID }
            for node in try db.recover(G.Node.self) { graph.nodes[node.id] = .some(node.parentID) }
            return graph
        }
    }

    /// Random creates, re-parentings and deletes under every rule (fixed seed), each checked against
    /// ``ReferenceGraph``: the same outcome (done, `referenceNotFound` or `deleteDenied`) and the same contents.
    static func randomized(_ db: some Database) throws {
        var random = SeededGenerator(seed: 0x6EA9_2026)
        var model = ReferenceGraph()
        let steps = 1_200
        func id(_ range: ClosedRange<Int64> = 1...12) -> Int64 { Int64.random(in: range, using: &random) }
        /// A parent reference: usually one that may exist, sometimes none, sometimes one that can't.
        func parentReference() -> Int64? {
            switch Int.random(in: 0..<10, using: &random) {
            case 0: nil
            case 1: 1_000
            default: id()
            }
        }
        /// How often each rule acted and each refusal came: the run must exercise them all.
        var seen: [String: Int] = [:]
        func expectOutcome(_ allowed: Bool, _ code: PersistenceError.Code, _ step: Int, _ body: () throws -> Void) {
            if !allowed { seen[code.rawValue, default: 0] += 1 }
            do {
                try body()
                #expect(allowed, "step \(step): expected \(code), the write succeeded")
            } catch let error as PersistenceError {
                #expect(!allowed && error.code == code, "step \(step): \(error)")
            } catch {
                Issue.record("step \(step): \(error)")
            }
        }
        func note(_ before: ReferenceGraph, _ after: ReferenceGraph) {
            seen["cascade", default: 0] += before.cascading.count - after.cascading.count
            let orphans = { (graph: ReferenceGraph) in graph.nullifying.values.filter { $0 == nil }.count }
            seen["nullify", default: 0] += orphans(after) - orphans(before)
            model = after
        }
        func exists(_ parent: Int64?) -> Bool { parent.map { model.parents[$0] != nil } ?? true }

        for step in 0..<steps {
            switch Int.random(in: 0..<11, using: &random) {
            case 0, 1:
                let parent = id()
                guard model.parents[parent] == nil else { continue }
                let name = "p\(step % 3)"
                try db.create(G.Parent(id: parent, name: name))
                model.parents[parent] = name
            case 2:
                let (child, parent) = (id(1...30), parentReference())
                let valid = exists(parent)
                expectOutcome(valid, .referenceNotFound, step) {
                    try db.upsert(G.CascadeChild(id: child, parentID: parent))
                }
                if valid { model.cascading[child] = .some(parent) }
            case 3:
                let (child, parent) = (id(1...30), parentReference())
                let valid = exists(parent)
                expectOutcome(valid, .referenceNotFound, step) {
                    try db.upsert(G.NullifyChild(id: child, parentID: parent))
                }
                if valid { model.nullifying[child] = .some(parent) }
            case 4:
                let (child, parent) = (id(1...6), parentReference())
                let valid = exists(parent)
                expectOutcome(valid, .referenceNotFound, step) {
                    try db.upsert(G.DenyChild(id: child, parentID: parent))
                }
                if valid { model.denying[child] = .some(parent) }
                // Deny children come and go, or parents would soon never be deletable.
                if Int.random(in: 0..<4, using: &random) == 0,
                    let doomed = model.denying.keys.sorted().randomElement(using: &random)
                {
                    try db.delete(G.DenyChild.self, id: doomed)
                    model.denying[doomed] = nil
                }
            case 5:
                let (child, parent) = (id(1...10), parentReference())
                let valid = exists(parent)
                expectOutcome(valid, .referenceNotFound, step) {
                    try db.upsert(G.NoActionChild(id: child, parentID: parent))
                }
                if valid { model.untouched[child] = .some(parent) }
            case 6:
                let (grandchild, child) = (id(1...4), id(1...30))
                let valid = model.cascading[child] != nil
                expectOutcome(valid, .referenceNotFound, step) {
                    try db.upsert(G.Grandchild(id: grandchild, childID: child))
                }
                if valid { model.grandchildren[grandchild] = child }
                if Bool.random(using: &random),
                    let doomed = model.grandchildren.keys.sorted().randomElement(using: &random)
                {
                    try db.delete(G.Grandchild.self, id: doomed)
                    model.grandchildren[doomed] = nil
                }
            case 7:
                let parent = id()
                var copy = model
                let allowed = model.parents[parent] == nil || copy.deleteParents([parent])
                expectOutcome(allowed, .deleteDenied, step) { try db.delete(G.Parent.self, id: parent) }
                if allowed { note(model, copy) }
            case 8:
                let name = "p\(Int.random(in: 0..<3, using: &random))"
                var copy = model
                let allowed = copy.deleteParents(Set(model.parents.filter { $0.value == name }.keys))
                expectOutcome(allowed, .deleteDenied, step) {
                    try db.delete(G.Parent.self, where: Field("name") == name)
                }
                if allowed { note(model, copy) }
            case 9:
                let child = id(1...30)
                var copy = model
                let allowed = copy.deleteChild(child)
                expectOutcome(allowed, .deleteDenied, step) { try db.delete(G.CascadeChild.self, id: child) }
                if allowed { model = copy }
            default:
                let node = "n\(id(1...15))"
                if Int.random(in: 0..<3, using: &random) == 0 {
                    try db.delete(G.Node.self, id: node)
                    model.deleteNode(node)
                } else {
                    let parent = Bool.random(using: &random) ? nil : "n\(id(1...16))"
                    let valid = parent.map { $0 == node || model.nodes[$0] != nil } ?? true
                    expectOutcome(valid, .referenceNotFound, step) {
                        try db.upsert(G.Node(id: node, parentID: parent))
                    }
                    if valid { model.nodes[node] = .some(parent) }
                }
            }
            let stored = try ReferenceGraph.read(db)
            guard stored == model else {
                Issue.record("step \(step): the store differs from the reference model")
                return
            }
        }
        for outcome in ["cascade", "nullify", "deleteDenied", "referenceNotFound"] {
            #expect(seen[outcome, default: 0] >= 15, "the run exercised \(outcome) too rarely: \(seen)")
        }
        // Only noAction leaves dangling references, and verify names each one.
        let dangling = model.untouched.values.filter { $0.map { model.parents[$0] == nil } == true }.count
        #expect(try db.verify().problems.filter { $0.kind == .danglingReference }.count == dangling)
    }
}
