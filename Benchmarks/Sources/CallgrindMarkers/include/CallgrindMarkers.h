#ifndef CALLGRIND_MARKERS_H
#define CALLGRIND_MARKERS_H

/// Marks the benchmarks' timed operations for callgrind (`make instructions`): collection on at the start of one,
/// off at its end, and the counts dumped under a label. Outside valgrind — or where valgrind's headers aren't
/// installed — each call is a few instructions that do nothing.

/// Turns instruction collection on (valgrind runs with `--collect-atstart=no`).
void persistence_callgrind_begin(void);

/// Turns collection off and dumps what was counted since the last dump, labelled `label`.
void persistence_callgrind_end(const char *label);

#endif
