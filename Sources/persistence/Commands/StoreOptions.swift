import ArgumentParser
import Foundation
import PersistenceCommands
import PersistenceCore
import PersistenceTool

/// Where a new encrypted LMDB store's passphrase comes from (for a PostgreSQL destination: the server's password).
struct DestinationPassphraseOptions: ParsableArguments {
    @Option(name: .long, help: "Encrypt a new LMDB store (or log in to PostgreSQL) with the first line of this file.")
    var destinationPassphraseFile: String?

    @Option(name: .long, help: "Encrypt a new LMDB store (or log in to PostgreSQL) with this environment variable.")
    var destinationPassphraseEnv: String?

    @Flag(name: .long, help: "Ask for a new LMDB store's passphrase on the terminal (twice).")
    var destinationPassphrasePrompt = false

    func source() throws -> SecretSource? {
        try chosenSource(
            file: destinationPassphraseFile, environment: destinationPassphraseEnv, prompt: destinationPassphrasePrompt,
            options: "--destination-passphrase-file, -env and -prompt")
    }
}
