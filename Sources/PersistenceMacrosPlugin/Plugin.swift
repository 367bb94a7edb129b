import SwiftCompilerPlugin
import SwiftSyntaxMacros

/// The compiler plugin that hosts the package's macros.
@main
struct PersistenceMacrosPlugin: CompilerPlugin {
    let providingMacros: [any Macro.Type] = [EntityMacro.self]
}
