#include "CLMDB.h"

#include <errno.h>
#include <fcntl.h>
#include <semaphore.h>

// The vendored lmdb.h defines the macro beside its patched declaration; the system's has neither.
#if defined(PERSISTENCE_LMDB_SEMPREFIX)
int persistence_lmdb_has_semaphore_prefix(void) { return 1; }
int persistence_lmdb_set_semaphore_prefix(MDB_env *env, const char *prefix) {
    return mdb_env_set_semprefix(env, prefix);
}
#else
int persistence_lmdb_has_semaphore_prefix(void) { return 0; }
int persistence_lmdb_set_semaphore_prefix(MDB_env *env, const char *prefix) {
    (void)env;
    (void)prefix;
    return ENOTSUP;
}
#endif

#if defined(F_FULLFSYNC)
int persistence_full_fsync(int fd) { return fcntl(fd, F_FULLFSYNC) == -1 ? errno : 0; }
int persistence_has_full_fsync(void) { return 1; }
#else
int persistence_full_fsync(int fd) {
    (void)fd;
    return 0;
}
int persistence_has_full_fsync(void) { return 0; }
#endif

int persistence_semaphore_value(const char *name, int *value) {
    sem_t *semaphore = sem_open(name, 0);
    if (semaphore == SEM_FAILED) return errno;
    int code = sem_getvalue(semaphore, value) == 0 ? 0 : errno;
    sem_close(semaphore);
    return code;
}

int persistence_semaphore_take(const char *name) {
    sem_t *semaphore = sem_open(name, 0);
    if (semaphore == SEM_FAILED) return errno;
    while (sem_wait(semaphore) != 0) {
        if (errno != EINTR) return errno;
    }
    return 0;
}
