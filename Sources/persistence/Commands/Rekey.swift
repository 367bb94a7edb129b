import ArgumentParser
import Foundation
import PersistenceCommands
import PersistenceCore
import PersistenceTool

extension StoreMaintenance.KeyDerivationPreset: ExpressibleByArgument {}

/// `persistence rekey STORE`: an encrypted LMDB store's new passphrase, one record rewritten.
struct Rekey: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Change an encrypted LMDB store's passphrase, in one transaction.",
        discussion: """
            The store's data keys are unwrapped with the current passphrase and wrapped under the new one: one \
            record is rewritten, no value is re-encrypted, and a crash leaves exactly one of the two passphrases \
            working. A wrong current passphrase changes nothing. A format-1 or format-2 store becomes format 3. \
            Databases open on the store elsewhere go on working; opening it again needs the new passphrase. \
            Someone who has the old passphrase and an old copy of the file can still read that copy: after a leak, \
            copy the data into a new store instead. The store is read in a child process (a damaged file ends that \
            process: exit 65).
            """)

    @Argument(help: "The encrypted LMDB store.") var store: String
    @OptionGroup var passphrase: PassphraseOptions

    @Option(name: .long, help: "Read the new passphrase from the first line of this file.")
    var newPassphraseFile: String?

    @Option(name: .long, help: "Read the new passphrase from this environment variable.")
    var newPassphraseEnv: String?

    @Flag(name: .long, help: "Ask for the new passphrase on the terminal, twice (the default).")
    var newPassphrasePrompt = false

    @Option(
        name: .long,
        help: ArgumentHelp(
            "The new passphrase's key derivation: rfc9106 (the library's default), owasp-minimum, sensitive or "
                + "owasp-scrypt; the store's own when not given.",
            valueName: "preset"))
    var keyDerivation: StoreMaintenance.KeyDerivationPreset?

    @OptionGroup var child: InProcessOption

    func run() throws {
        let locator = try locator(store)
        if child.isolates(locator) { return try ChildProcess.run(InProcessOption.childArguments, store: store) }
        let new =
            try chosenSource(
                file: newPassphraseFile, environment: newPassphraseEnv, prompt: newPassphrasePrompt,
                options: "--new-passphrase-file, -env and -prompt") ?? .prompt
        let line = try reportingErrors(store) {
            try StoreMaintenance.rekey(
                locator, current: passphrase.source() ?? .prompt, new: new,
                keyDerivation: keyDerivation?.keyDerivation)
        }
        print(line)
    }
}
