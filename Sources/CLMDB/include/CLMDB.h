// LMDB as PersistenceLMDB imports it, whichever library provides it: the system's liblmdb (CLMDBSystem, Linux by
// default) or the vendored 0.9 sources (CLMDBVendored: Apple platforms, and Linux with the VendoredLibraries trait).
// Package.swift makes exactly one of them a dependency of this target, so `<lmdb.h>` is that one's header.
#include <lmdb.h>

// 1 when this build's LMDB has the vendored patch `mdb_env_set_semprefix` (a semaphore-name prefix); 0 otherwise.
int persistence_lmdb_has_semaphore_prefix(void);

// Sets the semaphore-name prefix where the vendored LMDB has it (EINVAL for a prefix LMDB refuses), ENOTSUP where it
// hasn't (the system library, or a build without POSIX semaphores).
int persistence_lmdb_set_semaphore_prefix(MDB_env *env, const char *prefix);

// Asks the drive to write its cache to the medium: fcntl(F_FULLFSYNC) where the platform has it (Apple's), 0 and
// nothing done elsewhere (Linux's fsync, which LMDB already calls at commit, flushes the drive's cache itself).
int persistence_full_fsync(int fd);

// 1 where persistence_full_fsync does something (F_FULLFSYNC exists), 0 where it is a no-op.
int persistence_has_full_fsync(void);

// For tests on Linux: the value of the named POSIX semaphore `name` (1: free, 0: held) in *value, 0 returned; an errno
// when it can't be opened or read (Apple has no sem_getvalue).
int persistence_semaphore_value(const char *name, int *value);

// For tests: takes the named POSIX semaphore (waits for it) and keeps it: 0, or an errno when it can't be opened or
// taken. A process that calls this on one of LMDB's semaphores and then dies is a holder that died holding it.
int persistence_semaphore_take(const char *name);
