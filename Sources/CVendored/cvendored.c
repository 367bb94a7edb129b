// The C target needs one source file; it has nothing of its own (see include/CVendored.h).
#include "CVendored.h"
