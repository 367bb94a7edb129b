import ArgumentParser
import Foundation
import Workloads

/// The workload ids `--only` accepts, in the order they run.
enum WorkloadID: String, CaseIterable, ExpressibleByArgument {
    case s1 = "S1"
    case s2 = "S2"
    case s3 = "S3"
    case s4 = "S4"
    case s5 = "S5"
    case s6 = "S6"
    case s7 = "S7"
    case s8 = "S8"
    case d1 = "D1"
    case n1 = "N1"
    case rs1 = "RS1"
    case rs2 = "RS2"
    case r1 = "R1"
    case f1 = "F1"
    case v1 = "V1"
    case g1 = "G1"
    case a1 = "A1"
    case e1 = "E1"
    case p1 = "P1"
    case p2 = "P2"
    case p3 = "P3"
    case p4 = "P4"
    case p5 = "P5"
    case p6 = "P6"
    case p7 = "P7"
    case l1 = "L1"
    case l4 = "L4"
    case l5 = "L5"
    case l6 = "L6"
    case k = "K"
    case m = "M"
    case m2 = "M2"
    case m3 = "M3"
    case o1 = "O1"
    case o2 = "O2"
    case y1 = "Y1"
    case y2 = "Y2"
    case y3 = "Y3"
    case y4 = "Y4"
    // The store tool last: T2 takes S2's and L1's medians when they were measured at its N.
    case t1 = "T1"
    case t2 = "T2"
    case t3 = "T3"

    init?(argument: String) {
        self.init(rawValue: argument.uppercased())
    }

    var sqlite: SQLiteWorkload? { SQLiteWorkload(rawValue: rawValue) }
    var lmdb: LMDBWorkload? { LMDBWorkload(rawValue: rawValue) }
    var postgres: PostgresWorkload? { PostgresWorkload(rawValue: rawValue) }
    /// Whether the workload needs a PostgreSQL server.
    var needsServer: Bool { postgres != nil || [.p7, .y1, .y2, .y3, .y4].contains(self) }
    /// Whether the workload runs the `persistence` binary (`--tool-binary`).
    var needsTool: Bool { [.t1, .t2, .t3].contains(self) }
}

/// Parses `--only S1,S8,R1,P3,L4,K,M,M2,O1,Y2,T2`.
func parseSelection(_ text: String?) throws -> [WorkloadID] {
    guard let text, !text.isEmpty else { return WorkloadID.allCases }
    var selected = Set<WorkloadID>()
    for item in text.split(separator: ",") {
        let name = item.trimmingCharacters(in: .whitespaces)
        guard let id = WorkloadID(argument: name) else {
            let known = WorkloadID.allCases.map(\.rawValue).joined(separator: ", ")
            throw ValidationError("unknown workload '\(name)' in --only (known: \(known))")
        }
        selected.insert(id)
    }
    return WorkloadID.allCases.filter(selected.contains)
}
