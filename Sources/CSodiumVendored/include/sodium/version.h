
#ifndef sodium_version_H
#define sodium_version_H

/* Written by hand for the vendored build (persistence): configure generates this file from version.h.in; the values
 * are those configure.ac of libsodium 1.0.20-stable substitutes (VERSION, SODIUM_LIBRARY_VERSION_MAJOR/MINOR), and
 * SODIUM_LIBRARY_MINIMAL is left undefined because every source file is compiled (not --enable-minimal). */

#include "export.h"

#define SODIUM_VERSION_STRING "1.0.20"

#define SODIUM_LIBRARY_VERSION_MAJOR 26
#define SODIUM_LIBRARY_VERSION_MINOR 2


#ifdef __cplusplus
extern "C" {
#endif

SODIUM_EXPORT
const char *sodium_version_string(void);

SODIUM_EXPORT
int         sodium_library_version_major(void);

SODIUM_EXPORT
int         sodium_library_version_minor(void);

SODIUM_EXPORT
int         sodium_library_minimal(void);

#ifdef __cplusplus
}
#endif

#endif
