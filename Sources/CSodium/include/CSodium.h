// libsodium as PersistenceLMDB imports it: the system's (CSodiumSystem, Linux by default) or the vendored release
// (CSodiumVendored: Apple platforms, and Linux with the VendoredLibraries trait); Package.swift makes exactly one of
// them a dependency of this target.
#include <sodium.h>

// BLAKE2b's state is declared with 64-byte alignment, which Swift does not import; these take it as raw memory
// (callers pass 64-byte-aligned memory of crypto_generichash_blake2b_statebytes() bytes).
static inline int persistence_blake2b_init(void *state, const unsigned char *key, size_t keylen, size_t outlen) {
    return crypto_generichash_blake2b_init((crypto_generichash_blake2b_state *)state, key, keylen, outlen);
}

static inline int persistence_blake2b_update(void *state, const unsigned char *in, unsigned long long inlen) {
    return crypto_generichash_blake2b_update((crypto_generichash_blake2b_state *)state, in, inlen);
}

static inline int persistence_blake2b_final(void *state, unsigned char *out, size_t outlen) {
    return crypto_generichash_blake2b_final((crypto_generichash_blake2b_state *)state, out, outlen);
}
