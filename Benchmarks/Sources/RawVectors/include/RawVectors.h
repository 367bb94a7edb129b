#ifndef RAW_VECTORS_H
#define RAW_VECTORS_H

#include <stddef.h>
#include <stdint.h>

/// V1's baseline: the `k` vectors of `vectors` (`count` of `dimensions` floats, one after another) nearest `query`
/// by cosine distance, written to `nearest` (indexes, nearest first) — the plain loop an app would write in C.
/// Returns how many were written (at most `k`, at most 64).
size_t raw_vectors_nearest_cosine(
    const float *vectors, size_t count, size_t dimensions, const float *query, size_t k, int64_t *nearest);

#endif
