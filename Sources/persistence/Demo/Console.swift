import Foundation
import PersistenceCore

/// Prints the demo's numbered steps and checks what each step expects.
final class Console {
    private var stepNumber = 0

    /// Starts a numbered step.
    func step(_ title: String) {
        stepNumber += 1
        print("\n[\(stepNumber)] \(title)")
    }

    /// Prints one line of a step's output.
    func detail(_ line: String) {
        Self.detail(line)
    }

    /// Prints one line of a step's output, from code that may run on another thread (a progress handler).
    static func detail(_ line: String) {
        print("    \(line)")
    }

    /// Prints a line outside any step.
    func note(_ line: String) {
        print(line)
    }

    /// Fails the demo when a result is not what the step expects, so a broken backend never looks fine.
    func check(_ condition: Bool, _ failure: @autoclosure () -> String) throws {
        guard condition else { throw DemoError.unexpected(failure()) }
    }

    /// Cents as dollars, such as `$12.05`.
    static func money(_ cents: Int64) -> String {
        let sign = cents < 0 ? "-" : ""
        let magnitude = cents.magnitude
        let fraction = magnitude % 100
        return "\(sign)$\(magnitude / 100).\(fraction < 10 ? "0" : "")\(fraction)"
    }

    /// A stored value for display. (`Value.description` deliberately hides contents, so logs never leak data;
    /// the demo shows its own made-up data on purpose.)
    static func show(_ value: Value) -> String {
        switch value {
        case .null: "nil"
        case .integer(let integer): String(integer)
        case .real(let real): String(real)
        case .text(let text): text
        case .blob(let data): "<\(data.count) bytes>"
        }
    }

    /// A one-line summary of a customer.
    static func show(_ customer: Customer) -> String {
        "#\(customer.id) \(customer.name) <\(customer.email)> \(customer.tier.rawValue)"
    }

    /// A one-line summary of an order.
    static func show(_ order: Order, now: Date) -> String {
        let days = Int((now.timeIntervalSince(order.placedAt) / 86_400).rounded())
        let note = order.note.map { " \"\($0)\"" } ?? ""
        return "order #\(order.id) customer #\(order.customerID) \(money(order.totalCents)) \(days)d ago\(note)"
    }
}

/// Why the demo stopped.
enum DemoError: Error, CustomStringConvertible {
    /// A step's result was not what it expected.
    case unexpected(String)
    /// The error a checkout step throws on purpose to show a rollback.
    case paymentDeclined

    var description: String {
        switch self {
        case .unexpected(let what): "demo check failed: \(what)"
        case .paymentDeclined: "payment declined"
        }
    }
}
