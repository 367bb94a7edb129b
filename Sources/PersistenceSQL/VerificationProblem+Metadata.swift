import Foundation
package import PersistenceCore

extension VerificationProblem {
    /// The problems of a SQL store's metadata (`formatVersion`, `modelVersion`, `schema` by key, as read from its
    /// metadata table), the same on every SQL backend: keys missing, a format this version doesn't read, a model
    /// version that isn't an integer, a schema that isn't readable or isn't the model's.
    /// - Parameters:
    ///   - formatVersion: The newest format this version reads.
    ///   - current: The model's entity descriptions.
    package static func metadataProblems(
        _ stored: [String: Value], formatVersion: Int64, current: [EntityDescription]
    ) -> [VerificationProblem] {
        var problems: [VerificationProblem] = []
        for key in ["formatVersion", "modelVersion", "schema"] where stored[key] == nil {
            problems.append(VerificationProblem(.metadataMissing, message: "the metadata has no '\(key)'"))
        }
        if let format = stored["formatVersion"] {
            guard case .integer(let version) = format, (1...formatVersion).contains(version) else {
                problems.append(
                    VerificationProblem(.metadataInvalid, message: "the format version is not one this version reads"))
                return problems
            }
        }
        if let version = stored["modelVersion"], version.storageClass != .integer {
            problems.append(VerificationProblem(.metadataInvalid, message: "the model version is not an integer"))
        }
        guard let schema = stored["schema"] else { return problems }
        guard case .blob(let json) = schema,
            let descriptions = try? JSONDecoder().decode([EntityDescription].self, from: json)
        else {
            problems.append(VerificationProblem(.metadataInvalid, message: "the stored schema is unreadable"))
            return problems
        }
        let byName: ([EntityDescription]) -> [EntityDescription] = { $0.map(\.normalized).sorted { $0.name < $1.name } }
        if byName(descriptions) != byName(current) {
            problems.append(
                VerificationProblem(
                    .schemaMismatch, message: EntityDescription.difference(stored: descriptions, current: current)))
        }
        return problems
    }
}
