import SwiftDiagnostics
import SwiftParser
import SwiftSyntax

/// What `@Entity` checks of an entity's `relationships` and `indexes` at compile time — what the store would refuse
/// only when it opens: a foreign key or indexed attribute that isn't stored, a relationship name taken, a `nullify`
/// rule on a required foreign key, a foreign key of a type no primary key has, and, for relationships of the entity
/// to itself, an inverse that isn't there.
///
/// It reads the declarations as written — `static let relationships: [Relationship] = [.toOne(…), …]` and
/// `static let indexes: [Index] = [.on(…), …]` — with names as string literals; anything else (a computed list, an
/// interpolated name, another entity's declarations) is left to the check when the store opens, which covers it all.
struct DeclarationChecks {
    /// The struct's name, for messages.
    let entity: String
    let attributes: [EntityModel.Attribute]

    /// One relationship as declared.
    private struct Declared {
        let kind: String
        let name: String?
        let node: Syntax
        /// Whether the target is the entity itself (`Self.self` or its own name).
        let targetsItself: Bool
        let foreignKey: (name: String, node: Syntax)?
        let rule: String?
        let inverse: (name: String, node: Syntax)?
    }

    /// The problems found, each at the literal that has it.
    func check(_ structure: StructDeclSyntax) -> [Diagnostic] {
        var diagnostics: [Diagnostic] = []
        let names = attributes.map(\.name)
        let listed = names.joined(separator: ", ")
        for call in Self.calls(in: "indexes", of: structure) where ["on", "unique"].contains(call.name) {
            for argument in call.arguments {
                guard let literal = Self.text(argument.expression), !names.contains(literal) else { continue }
                diagnostics.append(
                    problem(
                        argument.expression,
                        "index names '\(literal)', which is not a stored attribute of \(entity) (it has: \(listed))"))
            }
        }
        let declared = Self.calls(in: "relationships", of: structure).compactMap { declaration($0, in: structure) }
        var taken = Set(names)
        for relationship in declared {
            guard let name = relationship.name else { continue }
            let label = "relationship '\(entity).\(name)'"
            if name.isEmpty || !taken.insert(name).inserted {
                diagnostics.append(
                    problem(
                        relationship.node,
                        "\(label) is unnamed or its name is taken by another attribute or relationship"))
            }
            switch relationship.kind {
            case "toOne":
                guard let foreignKey = relationship.foreignKey else { continue }
                guard let attribute = attributes.first(where: { $0.name == foreignKey.name }) else {
                    diagnostics.append(
                        problem(
                            foreignKey.node,
                            "\(label) names foreign key '\(foreignKey.name)', which is not a stored attribute of \(entity) (it has: \(listed))"
                        ))
                    continue
                }
                guard let type = attribute.type else { continue }
                if let base = Self.baseName(type), Self.notKeyTypes.contains(base) {
                    diagnostics.append(
                        problem(
                            foreignKey.node,
                            "the foreign key '\(foreignKey.name)' of \(label) must be an integer, a string or a UUID, not \(base)"
                        ))
                } else if relationship.rule == "nullify", !Self.isOptional(type) {
                    diagnostics.append(
                        problem(
                            foreignKey.node,
                            "\(label) nullifies on delete, but its foreign key '\(foreignKey.name)' is not optional: make it optional or choose cascade, deny or noAction"
                        ))
                }
            case "toMany", "manyToMany":
                // Only an inverse in this declaration can be seen: the entity's relationships to itself.
                guard relationship.targetsItself, let inverse = relationship.inverse else { continue }
                let kind = relationship.kind == "toMany" ? "toOne" : "manyToMany"
                let found = declared.contains { $0.name == inverse.name && $0.kind == kind && $0.targetsItself }
                if !found {
                    let wanted = kind == "toOne" ? "a to-one" : "a many-to-many"
                    diagnostics.append(
                        problem(
                            inverse.node, "\(label)'s inverse '\(inverse.name)' is not \(wanted) of \(entity) to itself"
                        ))
                }
            default:
                continue
            }
        }
        return diagnostics
    }

    private func problem(_ node: some SyntaxProtocol, _ message: String) -> Diagnostic {
        Diagnostic(node: node, message: EntityDiagnostic.declaration(message))
    }

    /// A relationship call's parts: `.toOne("name", Target.self, foreignKey: "key", onDelete: .rule)`,
    /// `.toMany("name", Target.self, inverse: "other")`, `.manyToMany(…)`.
    private func declaration(
        _ call: (name: String, arguments: [LabeledExprSyntax], node: Syntax), in structure: StructDeclSyntax
    )
        -> Declared?
    {
        guard ["toOne", "toMany", "manyToMany"].contains(call.name) else { return nil }
        let unlabeled = call.arguments.filter { $0.label == nil }
        func labeled(_ label: String) -> ExprSyntax? { call.arguments.first { $0.label?.text == label }?.expression }
        let target = unlabeled.dropFirst().first?.expression.as(MemberAccessExprSyntax.self)
        let targetName = target?.base?.trimmedDescription
        let foreignKey = labeled("foreignKey").flatMap { expression in
            Self.text(expression).map { ($0, Syntax(expression)) }
        }
        let inverse = labeled("inverse").flatMap { expression in Self.text(expression).map { ($0, Syntax(expression)) }
        }
        return Declared(
            kind: call.name, name: unlabeled.first.flatMap { Self.text($0.expression) }, node: call.node,
            targetsItself: target?.declName.baseName.text == "self"
                && (targetName == "Self" || targetName == structure.name.text),
            foreignKey: foreignKey, rule: labeled("onDelete")?.as(MemberAccessExprSyntax.self)?.declName.baseName.text,
            inverse: inverse)
    }

    /// The calls in the array literal a `static let` or `static var` named `name` is initialized with:
    /// `.on("a")`, `Relationship.toOne(…)`.
    private static func calls(in name: String, of structure: StructDeclSyntax) -> [(
        name: String, arguments: [LabeledExprSyntax], node: Syntax
    )] {
        for member in structure.memberBlock.members {
            guard let variable = member.decl.as(VariableDeclSyntax.self),
                variable.modifiers.contains(where: { $0.name.tokenKind == .keyword(.static) })
            else { continue }
            for binding in variable.bindings
            where binding.pattern.as(IdentifierPatternSyntax.self)?.identifier.text == name {
                guard let array = binding.initializer?.value.as(ArrayExprSyntax.self) else { return [] }
                return array.elements.compactMap { element in
                    guard let call = element.expression.as(FunctionCallExprSyntax.self),
                        let callee = call.calledExpression.as(MemberAccessExprSyntax.self)
                    else { return nil }
                    return (callee.declName.baseName.text, Array(call.arguments), Syntax(call))
                }
            }
        }
        return []
    }

    /// The text of a string literal without interpolation, or `nil`.
    private static func text(_ expression: ExprSyntax) -> String? {
        expression.as(StringLiteralExprSyntax.self)?.representedLiteralValue
    }

    /// Types no primary key has (primary keys are integers, strings and UUIDs).
    private static let notKeyTypes: Set<String> = ["Bool", "Double", "Float", "Date", "Data", "Decimal", "URL"]

    /// The name of a type without its optionality: `Int64` for `Int64?`.
    private static func baseName(_ type: TypeSyntax) -> String? {
        if let optional = type.as(OptionalTypeSyntax.self) { return baseName(optional.wrappedType) }
        if let optional = type.as(ImplicitlyUnwrappedOptionalTypeSyntax.self) { return baseName(optional.wrappedType) }
        return type.as(IdentifierTypeSyntax.self)?.name.text
    }

    /// Whether a type is spelled optional (`T?`, `T!`, `Optional<T>`).
    private static func isOptional(_ type: TypeSyntax) -> Bool {
        type.is(OptionalTypeSyntax.self) || type.is(ImplicitlyUnwrappedOptionalTypeSyntax.self)
            || type.as(IdentifierTypeSyntax.self)?.name.text == "Optional"
    }
}
