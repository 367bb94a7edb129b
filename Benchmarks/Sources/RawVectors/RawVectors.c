#include "RawVectors.h"

#include <math.h>

size_t raw_vectors_nearest_cosine(
    const float *vectors, size_t count, size_t dimensions, const float *query, size_t k, int64_t *nearest) {
    if (k > 64) k = 64;
    if (k == 0) return 0;
    float query_squares = 0;
    for (size_t i = 0; i < dimensions; i++) query_squares += query[i] * query[i];
    const float query_norm = sqrtf(query_squares);
    float distances[64];
    size_t kept = 0;
    for (size_t row = 0; row < count; row++) {
        const float *vector = vectors + row * dimensions;
        float dot = 0, squares = 0;
        for (size_t i = 0; i < dimensions; i++) {
            dot += vector[i] * query[i];
            squares += vector[i] * vector[i];
        }
        const float norms = sqrtf(squares) * query_norm;
        const float distance = norms == 0 ? 1 : 1 - dot / norms;
        if (kept == k && distance >= distances[kept - 1]) continue;
        size_t at = kept < k ? kept++ : kept - 1;
        while (at > 0 && distances[at - 1] > distance) {
            distances[at] = distances[at - 1];
            nearest[at] = nearest[at - 1];
            at--;
        }
        distances[at] = distance;
        nearest[at] = (int64_t)row;
    }
    return kept;
}
