#include "CallgrindMarkers.h"

#if defined(__has_include)
#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#define PERSISTENCE_HAS_CALLGRIND 1
#endif
#endif

void persistence_callgrind_begin(void) {
#ifdef PERSISTENCE_HAS_CALLGRIND
    CALLGRIND_TOGGLE_COLLECT;
#endif
}

void persistence_callgrind_end(const char *label) {
#ifdef PERSISTENCE_HAS_CALLGRIND
    CALLGRIND_TOGGLE_COLLECT;
    CALLGRIND_DUMP_STATS_AT(label);
#else
    (void)label;
#endif
}
