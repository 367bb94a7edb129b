import SwiftDiagnostics
import SwiftParser
import SwiftSyntax
import SwiftSyntaxBuilder
import SwiftSyntaxMacros

/// `@Entity`: writes a struct's `init(record:)` and `encode(to:)` — what an entity would otherwise read and write
/// through `Codable`'s keyed containers — from its stored properties, in an extension that also adds the `Entity`
/// conformance (an extension keeps the struct's memberwise initializer).
///
/// Each attribute is read and written by name through `AttributeReader.read` and `AttributeWriter.write`, whose
/// overloads pick the stored form the property's type has under `Codable` (a stored attribute type directly, a
/// raw-value enum by its raw value, anything else as JSON), so the two paths store identical records.
struct EntityMacro: ExtensionMacro {
    static func expansion(
        of node: AttributeSyntax, attachedTo declaration: some DeclGroupSyntax,
        providingExtensionsOf type: some TypeSyntaxProtocol, conformingTo protocols: [TypeSyntax],
        in context: some MacroExpansionContext
    ) throws -> [ExtensionDeclSyntax] {
        guard let structure = declaration.as(StructDeclSyntax.self) else {
            throw DiagnosticsError(diagnostics: [
                Diagnostic(node: node, message: EntityDiagnostic.notAStruct)
            ])
        }
        let model = try EntityModel(structure)
        let access = model.access.map { "\($0) " } ?? ""
        // Every attribute read into a local first, then the entity made from them in one step: a throwing read
        // between property assignments makes the optimizer keep a partly initialized `self` in memory and copy it
        // out at the end (a copy and a destroy of the whole entity per record, measured). The key path gives each
        // local its property's type, so the overload of `read` is the one the property's type picks.
        let reads = model.attributes.enumerated().map { index, attribute in
            "let value\(index) = try record.read(\(attribute.literal), as: PersistenceCore.AttributeReader.type(of: \\Self.\(attribute.property)))"
        }
        // Through the memberwise initializer where the struct has one: setting the properties one by one still
        // builds `self` in memory and copies it out (measured: ~250 instructions a record of 14 attributes).
        let construction =
            model.memberwise
            ? [
                "self.init("
                    + model.attributes.enumerated().map { "\($1.property): value\($0)" }.joined(separator: ", ") + ")"
            ]
            : model.attributes.enumerated().map { index, attribute in "self.\(attribute.property) = value\(index)" }
        let writes = model.attributes.map { "try record.write(self.\($0.property), for: \($0.literal))" }
        let conformance = protocols.isEmpty ? "" : ": " + protocols.map(\.trimmedDescription).joined(separator: ", ")
        let source: DeclSyntax = """
            extension \(type.trimmed)\(raw: conformance) {
                /// Reads the entity from a stored record, attribute by attribute (written by `@Entity`).
                \(raw: access)init(record: PersistenceCore.AttributeReader) throws {
                    \(raw: (reads + construction).joined(separator: "\n"))
                }

                /// Writes the entity's attributes into a record (written by `@Entity`).
                \(raw: access)func encode(to record: PersistenceCore.AttributeWriter) throws {
                    \(raw: writes.joined(separator: "\n"))
                }
            }
            """
        guard let extensionDecl = source.as(ExtensionDeclSyntax.self) else { return [] }
        return [extensionDecl]
    }
}

/// What `@Entity` reads off a struct: its stored attributes (by `CodingKeys` where it has them) and its access.
struct EntityModel {
    struct Attribute {
        /// The property's name.
        let property: String
        /// The attribute's name, as a string literal.
        let literal: String
        /// The attribute's name.
        var name: String = ""
        /// The property's declared type, when it has one written out.
        var type: TypeSyntax?
    }

    let attributes: [Attribute]
    /// Whether `init(record:)` can make the entity through the struct's implicit memberwise initializer: the struct
    /// declares no initializer of its own (which would drop the memberwise one), no stored property is private or
    /// fileprivate (which would make it private), and every stored property that isn't an attribute has a default.
    let memberwise: Bool
    /// The access the generated members need: `public`, `package`, or none (internal).
    let access: String?

    init(_ structure: StructDeclSyntax) throws {
        var diagnostics: [Diagnostic] = []
        var stored: [(name: String, binding: PatternBindingSyntax)] = []
        // The memberwise initializer's parameters that have no default: a `let` without a value, a `var` without
        // one whose type isn't spelled `T?` (which defaults to nil).
        var required: Set<String> = []
        var memberwise = true
        var hasID = false
        var codingKeys: [String: String]?
        for member in structure.memberBlock.members {
            let decl = member.decl
            if decl.is(IfConfigDeclSyntax.self) {
                diagnostics.append(Diagnostic(node: decl, message: EntityDiagnostic.conditional))
            } else if let variable = decl.as(VariableDeclSyntax.self) {
                guard !variable.modifiers.contains(where: { $0.name.tokenKind == .keyword(.static) }) else { continue }
                // A property wrapper is stored as the wrapper under `Codable`: not what the property's type says.
                if let attribute = variable.attributes.first, !variable.bindings.contains(where: Self.isComputed) {
                    diagnostics.append(Diagnostic(node: attribute, message: EntityDiagnostic.wrapped))
                    continue
                }
                for binding in variable.bindings {
                    guard let name = binding.pattern.as(IdentifierPatternSyntax.self)?.identifier.trimmedDescription
                    else {
                        diagnostics.append(Diagnostic(node: binding.pattern, message: EntityDiagnostic.pattern))
                        continue
                    }
                    if name == "id" { hasID = true }
                    if Self.isComputed(binding) { continue }
                    if variable.modifiers.contains(where: { $0.name.tokenKind == .keyword(.lazy) }) {
                        diagnostics.append(Diagnostic(node: binding, message: EntityDiagnostic.lazy(name)))
                        continue
                    }
                    // A `let` with a value is never decoded by `Codable`: not an attribute.
                    if variable.bindingSpecifier.tokenKind == .keyword(.let), binding.initializer != nil { continue }
                    if let type = binding.typeAnnotation?.type, let problem = Self.unsupported(type) {
                        diagnostics.append(Diagnostic(node: type, message: EntityDiagnostic.type(name, problem)))
                        continue
                    }
                    if variable.modifiers.contains(where: {
                        [.keyword(.private), .keyword(.fileprivate)].contains($0.name.tokenKind)
                    }) {
                        memberwise = false
                    }
                    let defaultsToNil =
                        variable.bindingSpecifier.tokenKind == .keyword(.var)
                        && (binding.typeAnnotation?.type.is(OptionalTypeSyntax.self) ?? false)
                    if binding.initializer == nil, !defaultsToNil { required.insert(name) }
                    stored.append((name, binding))
                }
            } else if let enumDecl = decl.as(EnumDeclSyntax.self), enumDecl.name.text == "CodingKeys" {
                codingKeys = Self.keys(of: enumDecl)
            } else if let function = decl.as(FunctionDeclSyntax.self), function.name.text == "encode",
                function.signature.parameterClause.parameters.first?.type.trimmedDescription == "Encoder"
                    || function.signature.parameterClause.parameters.first?.type.trimmedDescription == "any Encoder"
            {
                diagnostics.append(Diagnostic(node: function.name, message: EntityDiagnostic.ownCodable))
            } else if let initializer = decl.as(InitializerDeclSyntax.self) {
                memberwise = false
                if initializer.signature.parameterClause.parameters.first?.firstName.text == "from" {
                    diagnostics.append(Diagnostic(node: initializer.initKeyword, message: EntityDiagnostic.ownCodable))
                }
            }
        }
        if !hasID {
            diagnostics.append(Diagnostic(node: structure.name, message: EntityDiagnostic.noID))
        }
        let attributes: [Attribute] = stored.compactMap { property in
            guard let codingKeys else {
                return Attribute(
                    property: property.name, literal: Self.literal(property.name), name: property.name,
                    type: property.binding.typeAnnotation?.type)
            }
            // Left out of `CodingKeys`: not stored (it has a default value, or `Codable` refuses the type already).
            return codingKeys[property.name].map {
                Attribute(
                    property: property.name, literal: Self.literal($0), name: $0,
                    type: property.binding.typeAnnotation?.type)
            }
        }
        if attributes.isEmpty, diagnostics.isEmpty {
            diagnostics.append(Diagnostic(node: structure.name, message: EntityDiagnostic.nothingStored))
        }
        if diagnostics.isEmpty {
            diagnostics += DeclarationChecks(entity: structure.name.text, attributes: attributes).check(structure)
        }
        guard diagnostics.isEmpty else { throw DiagnosticsError(diagnostics: diagnostics) }
        self.attributes = attributes
        let attributeNames = Set(attributes.map(\.property))
        self.memberwise = memberwise && required.isSubset(of: attributeNames)
        let modifiers = structure.modifiers.map(\.name.tokenKind)
        access =
            modifiers.contains(.keyword(.public)) || modifiers.contains(.keyword(.open))
            ? "public" : modifiers.contains(.keyword(.package)) ? "package" : nil
    }

    /// Whether a binding is computed (a getter, or `get`/`set` accessors) rather than stored (observers are stored).
    static func isComputed(_ binding: PatternBindingSyntax) -> Bool {
        guard let accessors = binding.accessorBlock?.accessors else { return false }
        switch accessors {
        case .getter: return true
        case .accessors(let list):
            return list.contains {
                [.keyword(.get), .keyword(.set), .keyword(._read), .keyword(._modify)].contains(
                    $0.accessorSpecifier.tokenKind)
            }
        }
    }

    /// Why a property's type can't be stored, or `nil` when it can (what `Codable` accepts is checked by the
    /// compiler against the generated calls).
    static func unsupported(_ type: TypeSyntax) -> String? {
        if let optional = type.as(OptionalTypeSyntax.self) { return unsupported(optional.wrappedType) }
        if let optional = type.as(ImplicitlyUnwrappedOptionalTypeSyntax.self) {
            return unsupported(optional.wrappedType)
        }
        if type.is(FunctionTypeSyntax.self) { return "a function" }
        if type.is(TupleTypeSyntax.self) { return "a tuple" }
        if type.is(MetatypeTypeSyntax.self) { return "a metatype" }
        if let some = type.as(SomeOrAnyTypeSyntax.self) {
            return some.someOrAnySpecifier.tokenKind == .keyword(.some) ? "an opaque type" : "an existential"
        }
        if let attributed = type.as(AttributedTypeSyntax.self) { return unsupported(attributed.baseType) }
        if let identifier = type.as(IdentifierTypeSyntax.self), ["Any", "AnyObject"].contains(identifier.name.text) {
            return "an existential"
        }
        return nil
    }

    /// The attribute names a `CodingKeys` enum gives its cases.
    static func keys(of codingKeys: EnumDeclSyntax) -> [String: String] {
        var keys: [String: String] = [:]
        for member in codingKeys.memberBlock.members {
            guard let cases = member.decl.as(EnumCaseDeclSyntax.self) else { continue }
            for element in cases.elements {
                let name = element.name.text.trimmingBackticks
                let raw = element.rawValue?.value.as(StringLiteralExprSyntax.self)?.representedLiteralValue
                keys[name] = raw ?? name
            }
        }
        return keys
    }

    /// A string literal of `text`.
    static func literal(_ text: String) -> String {
        StringLiteralExprSyntax(content: text).trimmedDescription
    }
}

extension String {
    /// The identifier without the backticks that escape a keyword.
    var trimmingBackticks: String {
        hasPrefix("`") && hasSuffix("`") && count > 1 ? String(dropFirst().dropLast()) : self
    }
}

/// The errors `@Entity` reports at compile time.
enum EntityDiagnostic: DiagnosticMessage {
    case notAStruct
    case noID
    case nothingStored
    case pattern
    case lazy(String)
    case type(String, String)
    case ownCodable
    case conditional
    case wrapped
    /// A relationship or index declaration that can't fit the entity (the message says why).
    case declaration(String)

    var message: String {
        switch self {
        case .notAStruct: "@Entity applies to a struct: entities are plain values"
        case .noID: "an entity needs an 'id' property (its primary key, or one that returns it)"
        case .nothingStored: "an entity needs at least one stored property: this one has only computed ones"
        case .pattern: "@Entity can't store a property declared with a pattern; declare each property by name"
        case .lazy(let name): "'\(name)' is lazy: an entity's stored properties are its attributes, read whole"
        case .type(let name, let problem): "'\(name)' is \(problem), which can't be stored as an attribute"
        case .ownCodable:
            "@Entity writes the record code from the stored properties; a type with its own Codable implementation "
                + "may store differently: drop @Entity (Codable is the default) or the custom implementation"
        case .conditional:
            "@Entity can't see which stored properties an #if block leaves: declare them outside it, or drop @Entity"
        case .wrapped:
            "a property wrapper is stored as the wrapper, not as the property's type: @Entity can't write its record "
                + "code (drop the wrapper or @Entity)"
        case .declaration(let message): message
        }
    }

    var diagnosticID: MessageID {
        let id: String =
            switch self {
            case .notAStruct: "notAStruct"
            case .noID: "noID"
            case .nothingStored: "nothingStored"
            case .pattern: "pattern"
            case .lazy: "lazy"
            case .type: "type"
            case .ownCodable: "ownCodable"
            case .conditional: "conditional"
            case .wrapped: "wrapped"
            case .declaration: "declaration"
            }
        return MessageID(domain: "PersistenceMacros", id: id)
    }

    var severity: DiagnosticSeverity { .error }
}
