// The C target needs one source file; the header is all there is (inline helpers over libsodium).
#include "CSodium.h"
