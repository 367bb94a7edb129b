// The backend kit: what a package that implements a backend imports, besides the core's backend SPI.
//
// An outside backend depends on this product and writes
// `@_spi(PersistenceBackend) import PersistenceCore` and `@_spi(PersistenceBackend) import PersistenceEngine`.
// The kit is versioned with the package; its SPI may change in a minor release before 1.0.
@_exported public import PersistenceCore
@_exported public import PersistenceEngine
