// crashtrace: an LD_PRELOAD library that records, in order, every operation of a process that changes files under one
// directory — the data that may or may not reach the disk before a power cut, and the syncs that decide it — so that a
// harness can build the states a cut could leave (issue 53). It records, it never changes what the calls do.
//
//   CRASHTRACE_DIR=/abs/dir  the directory whose files are traced (absolute; its realpath is used)
//   CRASHTRACE_LOG=/abs/log  the trace, appended to (its own file descriptor is never traced)
//
// Each call that succeeds is recorded after it returns, while a lock is held around the call and the record, so the
// trace's order is the order the kernel applied them (the traced process's file operations take turns). Writes to
// standard output are recorded too (OUTPUT): a worker's acknowledgements, in their place among the file operations.
//
// One record, little-endian:
//   u32 kind · i64 result · u32 flags · i64 offset · i64 length · u32 n · path[n] · u32 m · path2[m] · u64 d · data[d]
// Paths are relative to CRASHTRACE_DIR. Kinds and fields:
//   OPEN     path; flags: CT_CREATED (it did not exist before), CT_TRUNCATED, CT_SYNCHRONOUS (O_SYNC/O_DSYNC: every
//            write through this descriptor is durable when it returns), CT_DIRECTORY
//   WRITE    path, offset, data (what was written: the call's result bytes); flags: CT_SYNCHRONOUS
//   TRUNCATE path, length (the new size)
//   SYNC     path (a file, or a directory: "." is the root); flags: CT_DATA_ONLY for fdatasync; an empty path for
//            sync and syncfs (every file)
//   RENAME   path → path2 · LINK path → path2 (a new name) · UNLINK path · MKDIR path · RMDIR path
//   OUTPUT   data written to standard output
//   MAPPED   path: mapped shared and writable (writes through memory are not seen; the harness knows which files)
//   ALLOCATE path, offset, length (fallocate)
//
// Not seen: stdio (fopen/fwrite call glibc's internal open and write), raw syscall(2), io_uring. The library and its
// engines use none of them for their files.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

enum {
    CT_OPEN = 1,
    CT_WRITE = 2,
    CT_TRUNCATE = 3,
    CT_SYNC = 4,
    CT_RENAME = 5,
    CT_LINK = 6,
    CT_UNLINK = 7,
    CT_MKDIR = 8,
    CT_RMDIR = 9,
    CT_OUTPUT = 10,
    CT_MAPPED = 11,
    CT_ALLOCATE = 12,
};
enum {
    CT_CREATED = 1,
    CT_TRUNCATED = 2,
    CT_SYNCHRONOUS = 4,
    CT_DIRECTORY = 8,
    CT_DATA_ONLY = 16,
};

#define CT_MAX_FDS 65536

static pthread_mutex_t lock = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
static char root[PATH_MAX];
static size_t root_length;
static int log_fd = -1;
// The traced path (relative to root) each descriptor was opened on, and whether its writes are synchronous.
static char *fd_paths[CT_MAX_FDS];
static int fd_synchronous[CT_MAX_FDS];

#define REAL(name) real_##name
#define DECLARE_REAL(ret, name, ...) static ret (*real_##name)(__VA_ARGS__)
DECLARE_REAL(int, open, const char *, int, ...);
DECLARE_REAL(int, open64, const char *, int, ...);
DECLARE_REAL(int, openat, int, const char *, int, ...);
DECLARE_REAL(int, openat64, int, const char *, int, ...);
DECLARE_REAL(int, __open_2, const char *, int);
DECLARE_REAL(int, __open64_2, const char *, int);
DECLARE_REAL(int, __openat_2, int, const char *, int);
DECLARE_REAL(int, __openat64_2, int, const char *, int);
DECLARE_REAL(int, creat, const char *, mode_t);
DECLARE_REAL(int, creat64, const char *, mode_t);
DECLARE_REAL(int, mkstemp, char *);
DECLARE_REAL(int, mkstemp64, char *);
DECLARE_REAL(int, mkostemp, char *, int);
DECLARE_REAL(int, mkostemp64, char *, int);
DECLARE_REAL(ssize_t, write, int, const void *, size_t);
DECLARE_REAL(ssize_t, pwrite, int, const void *, size_t, off_t);
DECLARE_REAL(ssize_t, pwrite64, int, const void *, size_t, off64_t);
DECLARE_REAL(ssize_t, writev, int, const struct iovec *, int);
DECLARE_REAL(ssize_t, pwritev, int, const struct iovec *, int, off_t);
DECLARE_REAL(ssize_t, pwritev64, int, const struct iovec *, int, off64_t);
DECLARE_REAL(ssize_t, pwritev2, int, const struct iovec *, int, off_t, int);
DECLARE_REAL(ssize_t, pread, int, void *, size_t, off_t);
DECLARE_REAL(int, ftruncate, int, off_t);
DECLARE_REAL(int, ftruncate64, int, off64_t);
DECLARE_REAL(int, truncate, const char *, off_t);
DECLARE_REAL(int, truncate64, const char *, off64_t);
DECLARE_REAL(int, fallocate, int, int, off_t, off_t);
DECLARE_REAL(int, fallocate64, int, int, off64_t, off64_t);
DECLARE_REAL(int, posix_fallocate, int, off_t, off_t);
DECLARE_REAL(int, posix_fallocate64, int, off64_t, off64_t);
DECLARE_REAL(int, fsync, int);
DECLARE_REAL(int, fdatasync, int);
DECLARE_REAL(void, sync, void);
DECLARE_REAL(int, syncfs, int);
DECLARE_REAL(int, rename, const char *, const char *);
DECLARE_REAL(int, renameat, int, const char *, int, const char *);
DECLARE_REAL(int, renameat2, int, const char *, int, const char *, unsigned int);
DECLARE_REAL(int, link, const char *, const char *);
DECLARE_REAL(int, linkat, int, const char *, int, const char *, int);
DECLARE_REAL(int, unlink, const char *);
DECLARE_REAL(int, unlinkat, int, const char *, int);
DECLARE_REAL(int, mkdir, const char *, mode_t);
DECLARE_REAL(int, mkdirat, int, const char *, mode_t);
DECLARE_REAL(int, rmdir, const char *);
DECLARE_REAL(int, close, int);
DECLARE_REAL(int, dup, int);
DECLARE_REAL(int, dup2, int, int);
DECLARE_REAL(int, dup3, int, int, int);
DECLARE_REAL(void *, mmap, void *, size_t, int, int, int, off_t);
DECLARE_REAL(void *, mmap64, void *, size_t, int, int, int, off64_t);
DECLARE_REAL(ssize_t, copy_file_range, int, off64_t *, int, off64_t *, size_t, unsigned int);
DECLARE_REAL(ssize_t, sendfile, int, int, off_t *, size_t);
DECLARE_REAL(ssize_t, sendfile64, int, int, off64_t *, size_t);

static void *resolve(const char *name) {
    void *symbol = dlsym(RTLD_NEXT, name);
    if (!symbol) {
        static const char message[] = "crashtrace: a libc function is missing\n";
        syscall(SYS_write, 2, message, sizeof message - 1);
        abort();
    }
    return symbol;
}

#define LOAD(name) real_##name = resolve(#name)

static void load_symbols(void) {
    LOAD(open); LOAD(open64); LOAD(openat); LOAD(openat64); LOAD(__open_2); LOAD(__open64_2); LOAD(__openat_2);
    LOAD(__openat64_2); LOAD(creat); LOAD(creat64); LOAD(mkstemp); LOAD(mkstemp64); LOAD(mkostemp);
    LOAD(mkostemp64); LOAD(write); LOAD(pwrite); LOAD(pwrite64); LOAD(writev); LOAD(pwritev); LOAD(pwritev64);
    LOAD(pwritev2); LOAD(pread); LOAD(ftruncate); LOAD(ftruncate64); LOAD(truncate); LOAD(truncate64);
    LOAD(fallocate); LOAD(fallocate64); LOAD(posix_fallocate); LOAD(posix_fallocate64); LOAD(fsync);
    LOAD(fdatasync); LOAD(sync); LOAD(syncfs); LOAD(rename); LOAD(renameat); LOAD(renameat2); LOAD(link);
    LOAD(linkat); LOAD(unlink); LOAD(unlinkat); LOAD(mkdir); LOAD(mkdirat); LOAD(rmdir); LOAD(close); LOAD(dup);
    LOAD(dup2); LOAD(dup3); LOAD(mmap); LOAD(mmap64); LOAD(copy_file_range); LOAD(sendfile); LOAD(sendfile64);
}

static pthread_once_t symbols_once = PTHREAD_ONCE_INIT;
// Every entry point loads the real functions first: another library's constructor may call one before ours runs.
#define LOADED() pthread_once(&symbols_once, load_symbols)

__attribute__((constructor)) static void crashtrace_start(void) {
    LOADED();
    const char *dir = getenv("CRASHTRACE_DIR");
    const char *log = getenv("CRASHTRACE_LOG");
    if (!dir || !log || !realpath(dir, root)) return;
    root_length = strlen(root);
    log_fd = real_open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    // Descriptors the process inherited are not traced: it opens what it writes.
}

// The path `path` names relative to the directory of `dirfd` (AT_FDCWD: the working directory), made absolute with
// `.` and `..` taken lexically; then, when it lies under the traced root, the part after it ("" for the root itself).
// Returns 0 when the path is not traced.
static int traced_path(int dirfd, const char *path, char out[PATH_MAX]) {
    if (log_fd < 0 || !path) return 0;
    char joined[PATH_MAX * 2];
    if (path[0] == '/') {
        snprintf(joined, sizeof joined, "%s", path);
    } else {
        char base[PATH_MAX];
        if (dirfd == AT_FDCWD) {
            if (!getcwd(base, sizeof base)) return 0;
        } else if (dirfd >= 0 && dirfd < CT_MAX_FDS && fd_paths[dirfd]) {
            snprintf(base, sizeof base, "%s/%s", root, fd_paths[dirfd]);
        } else {
            return 0;
        }
        snprintf(joined, sizeof joined, "%s/%s", base, path);
    }
    // Lexical normalisation into `normal`.
    char normal[PATH_MAX * 2];
    size_t length = 0;
    const char *cursor = joined;
    while (*cursor) {
        while (*cursor == '/') cursor++;
        const char *end = strchr(cursor, '/');
        size_t part = end ? (size_t)(end - cursor) : strlen(cursor);
        if (part == 0) break;
        if (part == 1 && cursor[0] == '.') {
        } else if (part == 2 && cursor[0] == '.' && cursor[1] == '.') {
            while (length > 0 && normal[length - 1] != '/') length--;
            if (length > 0) length--;
        } else {
            if (length + part + 2 >= sizeof normal) return 0;
            normal[length++] = '/';
            memcpy(normal + length, cursor, part);
            length += part;
        }
        cursor += part;
    }
    normal[length] = 0;
    if (length == 0) return 0;
    if (strncmp(normal, root, root_length) != 0) return 0;
    if (normal[root_length] != 0 && normal[root_length] != '/') return 0;
    const char *relative = normal + root_length + (normal[root_length] == '/' ? 1 : 0);
    // The root itself is ".": an empty path means every file (sync, syncfs).
    snprintf(out, PATH_MAX, "%s", relative[0] ? relative : ".");
    return 1;
}

static void put(const void *bytes, size_t count) {
    const char *at = bytes;
    while (count > 0) {
        ssize_t written = real_write(log_fd, at, count);
        if (written < 0) {
            if (errno == EINTR) continue;
            abort();  // a trace with a hole would give wrong crash states: stop loudly
        }
        at += written;
        count -= (size_t)written;
    }
}

static void record(
    uint32_t kind, int64_t result, uint32_t flags, int64_t offset, int64_t length, const char *path,
    const char *path2, const struct iovec *data, int data_count, uint64_t data_length) {
    uint32_t path_length = path ? (uint32_t)strlen(path) : 0;
    uint32_t path2_length = path2 ? (uint32_t)strlen(path2) : 0;
    put(&kind, 4);
    put(&result, 8);
    put(&flags, 4);
    put(&offset, 8);
    put(&length, 8);
    put(&path_length, 4);
    if (path_length) put(path, path_length);
    put(&path2_length, 4);
    if (path2_length) put(path2, path2_length);
    put(&data_length, 8);
    uint64_t left = data_length;
    for (int index = 0; index < data_count && left > 0; index++) {
        size_t take = data[index].iov_len < left ? data[index].iov_len : (size_t)left;
        put(data[index].iov_base, take);
        left -= take;
    }
}

static const char *fd_path(int fd) { return (fd >= 0 && fd < CT_MAX_FDS) ? fd_paths[fd] : NULL; }

static void forget(int fd) {
    if (fd < 0 || fd >= CT_MAX_FDS) return;
    free(fd_paths[fd]);
    fd_paths[fd] = NULL;
    fd_synchronous[fd] = 0;
}

static void remember(int fd, const char *path, int synchronous) {
    if (fd < 0 || fd >= CT_MAX_FDS) return;
    forget(fd);
    fd_paths[fd] = strdup(path);
    fd_synchronous[fd] = synchronous;
}

static int exists(const char *absolute) {
    struct stat status;
    return lstat(absolute, &status) == 0;
}

// An open of `path` (relative to `dirfd`) that returned `fd`, recorded when traced; `existed` is what lstat said
// before the call.
static void opened(int dirfd, const char *path, int flags, int fd, int existed) {
    char relative[PATH_MAX];
    if (fd < 0 || !traced_path(dirfd, path, relative)) return;
    int synchronous = (flags & (O_SYNC | O_DSYNC)) != 0;
    struct stat status;
    int directory = fstat(fd, &status) == 0 && S_ISDIR(status.st_mode);
    uint32_t kind_flags = (existed ? 0 : CT_CREATED) | ((flags & O_TRUNC) ? CT_TRUNCATED : 0) |
                          (synchronous ? CT_SYNCHRONOUS : 0) | (directory ? CT_DIRECTORY : 0);
    remember(fd, relative, synchronous);
    record(CT_OPEN, fd, kind_flags, 0, 0, relative, NULL, NULL, 0, 0);
}

static int existed_before(int dirfd, const char *path, int flags) {
    if (!(flags & O_CREAT)) return 1;
    char relative[PATH_MAX];
    if (!traced_path(dirfd, path, relative)) return 1;
    char absolute[PATH_MAX * 2];
    snprintf(absolute, sizeof absolute, "%s/%s", root, relative);
    return exists(absolute);
}

static mode_t mode_argument(int flags, va_list arguments) {
    return (flags & (O_CREAT | O_TMPFILE)) ? (mode_t)va_arg(arguments, int) : 0;
}

#define OPEN_BODY(call, dirfd, path, flags)                      \
    LOADED();                                                    \
    pthread_mutex_lock(&lock);                                   \
    int existed = existed_before(dirfd, path, flags);            \
    int fd = call;                                               \
    int saved = errno;                                           \
    opened(dirfd, path, flags, fd, existed);                     \
    pthread_mutex_unlock(&lock);                                 \
    errno = saved;                                               \
    return fd;

int open(const char *path, int flags, ...) {
    va_list arguments;
    va_start(arguments, flags);
    mode_t mode = mode_argument(flags, arguments);
    va_end(arguments);
    OPEN_BODY(real_open(path, flags, mode), AT_FDCWD, path, flags)
}

int open64(const char *path, int flags, ...) {
    va_list arguments;
    va_start(arguments, flags);
    mode_t mode = mode_argument(flags, arguments);
    va_end(arguments);
    OPEN_BODY(real_open64(path, flags, mode), AT_FDCWD, path, flags)
}

int openat(int dirfd, const char *path, int flags, ...) {
    va_list arguments;
    va_start(arguments, flags);
    mode_t mode = mode_argument(flags, arguments);
    va_end(arguments);
    OPEN_BODY(real_openat(dirfd, path, flags, mode), dirfd, path, flags)
}

int openat64(int dirfd, const char *path, int flags, ...) {
    va_list arguments;
    va_start(arguments, flags);
    mode_t mode = mode_argument(flags, arguments);
    va_end(arguments);
    OPEN_BODY(real_openat64(dirfd, path, flags, mode), dirfd, path, flags)
}

int __open_2(const char *path, int flags) { OPEN_BODY(real___open_2(path, flags), AT_FDCWD, path, flags) }
int __open64_2(const char *path, int flags) { OPEN_BODY(real___open64_2(path, flags), AT_FDCWD, path, flags) }
int __openat_2(int dirfd, const char *path, int flags) {
    OPEN_BODY(real___openat_2(dirfd, path, flags), dirfd, path, flags)
}
int __openat64_2(int dirfd, const char *path, int flags) {
    OPEN_BODY(real___openat64_2(dirfd, path, flags), dirfd, path, flags)
}
int creat(const char *path, mode_t mode) {
    OPEN_BODY(real_creat(path, mode), AT_FDCWD, path, O_CREAT | O_WRONLY | O_TRUNC)
}
int creat64(const char *path, mode_t mode) {
    OPEN_BODY(real_creat64(path, mode), AT_FDCWD, path, O_CREAT | O_WRONLY | O_TRUNC)
}

// mkstemp and its kind create a file whose name is known only afterwards: never one that existed.
#define TEMPORARY_BODY(call, template, flags)                    \
    LOADED();                                                    \
    pthread_mutex_lock(&lock);                                   \
    int fd = call;                                               \
    int saved = errno;                                           \
    opened(AT_FDCWD, template, (flags) | O_CREAT, fd, 0);        \
    pthread_mutex_unlock(&lock);                                 \
    errno = saved;                                               \
    return fd;

int mkstemp(char *template) { TEMPORARY_BODY(real_mkstemp(template), template, 0) }
int mkstemp64(char *template) { TEMPORARY_BODY(real_mkstemp64(template), template, 0) }
int mkostemp(char *template, int flags) { TEMPORARY_BODY(real_mkostemp(template, flags), template, flags) }
int mkostemp64(char *template, int flags) { TEMPORARY_BODY(real_mkostemp64(template, flags), template, flags) }

// A write of `result` bytes from `data` at `offset` through `fd`, recorded when traced (standard output as OUTPUT).
static void wrote(int fd, int64_t offset, const struct iovec *data, int count, ssize_t result) {
    if (result <= 0 || log_fd < 0) return;
    if (fd == 1) {
        record(CT_OUTPUT, result, 0, 0, 0, NULL, NULL, data, count, (uint64_t)result);
        return;
    }
    const char *path = fd_path(fd);
    if (!path) return;
    record(CT_WRITE, result, fd_synchronous[fd] ? CT_SYNCHRONOUS : 0, offset, result, path, NULL, data, count,
        (uint64_t)result);
}

// Where a write through `fd` without an offset lands: its position, or its end when opened to append.
static int64_t position(int fd) {
    if (!fd_path(fd)) return 0;
    int flags = fcntl(fd, F_GETFL);
    if (flags >= 0 && (flags & O_APPEND)) {
        struct stat status;
        return fstat(fd, &status) == 0 ? (int64_t)status.st_size : 0;
    }
    return (int64_t)lseek(fd, 0, SEEK_CUR);
}

ssize_t write(int fd, const void *buffer, size_t count) {
    LOADED();
    if (log_fd < 0 || fd == log_fd) return real_write(fd, buffer, count);
    pthread_mutex_lock(&lock);
    int64_t at = position(fd);
    ssize_t result = real_write(fd, buffer, count);
    int saved = errno;
    struct iovec data = {(void *)buffer, count};
    wrote(fd, at, &data, 1, result);
    pthread_mutex_unlock(&lock);
    errno = saved;
    return result;
}

#define PWRITE_BODY(call, fd, buffer, count, offset)             \
    LOADED();                                                    \
    pthread_mutex_lock(&lock);                                   \
    ssize_t result = call;                                       \
    int saved = errno;                                           \
    struct iovec data = {(void *)(buffer), (count)};             \
    wrote(fd, (int64_t)(offset), &data, 1, result);              \
    pthread_mutex_unlock(&lock);                                 \
    errno = saved;                                               \
    return result;

ssize_t pwrite(int fd, const void *buffer, size_t count, off_t offset) {
    PWRITE_BODY(real_pwrite(fd, buffer, count, offset), fd, buffer, count, offset)
}
ssize_t pwrite64(int fd, const void *buffer, size_t count, off64_t offset) {
    PWRITE_BODY(real_pwrite64(fd, buffer, count, offset), fd, buffer, count, offset)
}

ssize_t writev(int fd, const struct iovec *vectors, int count) {
    LOADED();
    pthread_mutex_lock(&lock);
    int64_t at = position(fd);
    ssize_t result = real_writev(fd, vectors, count);
    int saved = errno;
    wrote(fd, at, vectors, count, result);
    pthread_mutex_unlock(&lock);
    errno = saved;
    return result;
}

#define PWRITEV_BODY(call, fd, vectors, count, offset)           \
    LOADED();                                                    \
    pthread_mutex_lock(&lock);                                   \
    ssize_t result = call;                                       \
    int saved = errno;                                           \
    wrote(fd, (int64_t)(offset), vectors, count, result);        \
    pthread_mutex_unlock(&lock);                                 \
    errno = saved;                                               \
    return result;

ssize_t pwritev(int fd, const struct iovec *vectors, int count, off_t offset) {
    PWRITEV_BODY(real_pwritev(fd, vectors, count, offset), fd, vectors, count, offset)
}
ssize_t pwritev64(int fd, const struct iovec *vectors, int count, off64_t offset) {
    PWRITEV_BODY(real_pwritev64(fd, vectors, count, offset), fd, vectors, count, offset)
}
ssize_t pwritev2(int fd, const struct iovec *vectors, int count, off_t offset, int flags) {
    LOADED();
    // offset -1: at the file's position, as writev.
    pthread_mutex_lock(&lock);
    int64_t at = offset == -1 ? position(fd) : (int64_t)offset;
    ssize_t result = real_pwritev2(fd, vectors, count, offset, flags);
    int saved = errno;
    wrote(fd, at, vectors, count, result);
    if (result > 0 && (flags & (RWF_DSYNC | RWF_SYNC)) && fd_path(fd)) {
        record(CT_SYNC, 0, (flags & RWF_SYNC) ? 0 : CT_DATA_ONLY, 0, 0, fd_path(fd), NULL, NULL, 0, 0);
    }
    pthread_mutex_unlock(&lock);
    errno = saved;
    return result;
}

// Bytes another call wrote into `fd` (copy_file_range, sendfile): read back from the file and recorded as a write.
static void copied(int fd, int64_t offset, ssize_t result) {
    if (result <= 0 || !fd_path(fd)) return;
    char *buffer = malloc((size_t)result);
    if (!buffer) abort();
    ssize_t read = real_pread(fd, buffer, (size_t)result, offset);
    if (read != result) abort();  // the copy can't be recorded: stop loudly rather than trace a hole
    struct iovec data = {buffer, (size_t)result};
    wrote(fd, offset, &data, 1, result);
    free(buffer);
}

// Bytes another call copies into `out` at `at` (copy_file_range, sendfile), recorded as a write once it returns.
#define COPY_BODY(call, out, at)                                 \
    LOADED();                                                    \
    pthread_mutex_lock(&lock);                                   \
    int64_t position_before = at;                                \
    ssize_t result = call;                                       \
    int saved = errno;                                           \
    copied(out, position_before, result);                        \
    pthread_mutex_unlock(&lock);                                 \
    errno = saved;                                               \
    return result;

ssize_t copy_file_range(int in, off64_t *in_offset, int out, off64_t *out_offset, size_t count, unsigned flags) {
    COPY_BODY(real_copy_file_range(in, in_offset, out, out_offset, count, flags), out,
        out_offset ? *out_offset : position(out))
}
ssize_t sendfile(int out, int in, off_t *offset, size_t count) {
    COPY_BODY(real_sendfile(out, in, offset, count), out, position(out))
}
ssize_t sendfile64(int out, int in, off64_t *offset, size_t count) {
    COPY_BODY(real_sendfile64(out, in, offset, count), out, position(out))
}

#define FD_BODY(call, fd, kind, flags, offset, length)                                             \
    LOADED();                                                    \
    pthread_mutex_lock(&lock);                                                                     \
    int result = call;                                                                             \
    int saved = errno;                                                                             \
    if (result == 0 && fd_path(fd)) record(kind, 0, flags, offset, length, fd_path(fd), NULL, NULL, 0, 0); \
    pthread_mutex_unlock(&lock);                                                                   \
    errno = saved;                                                                                 \
    return result;

int ftruncate(int fd, off_t length) { FD_BODY(real_ftruncate(fd, length), fd, CT_TRUNCATE, 0, 0, length) }
int ftruncate64(int fd, off64_t length) { FD_BODY(real_ftruncate64(fd, length), fd, CT_TRUNCATE, 0, 0, length) }
int fsync(int fd) { FD_BODY(real_fsync(fd), fd, CT_SYNC, 0, 0, 0) }
int fdatasync(int fd) { FD_BODY(real_fdatasync(fd), fd, CT_SYNC, CT_DATA_ONLY, 0, 0) }
int fallocate(int fd, int mode, off_t offset, off_t length) {
    FD_BODY(real_fallocate(fd, mode, offset, length), fd, CT_ALLOCATE, (uint32_t)mode, offset, length)
}
int fallocate64(int fd, int mode, off64_t offset, off64_t length) {
    FD_BODY(real_fallocate64(fd, mode, offset, length), fd, CT_ALLOCATE, (uint32_t)mode, offset, length)
}
int posix_fallocate(int fd, off_t offset, off_t length) {
    FD_BODY(real_posix_fallocate(fd, offset, length), fd, CT_ALLOCATE, 0, offset, length)
}
int posix_fallocate64(int fd, off64_t offset, off64_t length) {
    FD_BODY(real_posix_fallocate64(fd, offset, length), fd, CT_ALLOCATE, 0, offset, length)
}

void sync(void) {
    LOADED();
    pthread_mutex_lock(&lock);
    real_sync();
    if (log_fd >= 0) record(CT_SYNC, 0, 0, 0, 0, "", NULL, NULL, 0, 0);
    pthread_mutex_unlock(&lock);
}

int syncfs(int fd) {
    LOADED();
    pthread_mutex_lock(&lock);
    int result = real_syncfs(fd);
    int saved = errno;
    if (result == 0 && log_fd >= 0) record(CT_SYNC, 0, 0, 0, 0, "", NULL, NULL, 0, 0);
    pthread_mutex_unlock(&lock);
    errno = saved;
    return result;
}

int truncate(const char *path, off_t length) {
    LOADED();
    pthread_mutex_lock(&lock);
    int result = real_truncate(path, length);
    int saved = errno;
    char relative[PATH_MAX];
    if (result == 0 && traced_path(AT_FDCWD, path, relative)) {
        record(CT_TRUNCATE, 0, 0, 0, length, relative, NULL, NULL, 0, 0);
    }
    pthread_mutex_unlock(&lock);
    errno = saved;
    return result;
}

int truncate64(const char *path, off64_t length) { return truncate(path, (off_t)length); }

// A change of names: recorded when either name is traced (a name moved out of the root is an unlink there; into it,
// a file whose contents the trace never saw — the harness refuses such a trace).
static void renamed(uint32_t kind, int result, int from_dir, const char *from, int to_dir, const char *to) {
    if (result != 0) return;
    char source[PATH_MAX], target[PATH_MAX];
    int traced_source = traced_path(from_dir, from, source);
    int traced_target = traced_path(to_dir, to, target);
    if (!traced_source && !traced_target) return;
    record(kind, 0, 0, 0, 0, traced_source ? source : "", traced_target ? target : "", NULL, 0, 0);
}

#define NAMES_BODY(call, kind, from_dir, from, to_dir, to)       \
    LOADED();                                                    \
    pthread_mutex_lock(&lock);                                   \
    int result = call;                                           \
    int saved = errno;                                           \
    renamed(kind, result, from_dir, from, to_dir, to);           \
    pthread_mutex_unlock(&lock);                                 \
    errno = saved;                                               \
    return result;

int rename(const char *from, const char *to) {
    NAMES_BODY(real_rename(from, to), CT_RENAME, AT_FDCWD, from, AT_FDCWD, to)
}
int renameat(int from_dir, const char *from, int to_dir, const char *to) {
    NAMES_BODY(real_renameat(from_dir, from, to_dir, to), CT_RENAME, from_dir, from, to_dir, to)
}
int renameat2(int from_dir, const char *from, int to_dir, const char *to, unsigned int flags) {
    // RENAME_EXCHANGE swaps two names: not a rename the harness models; recorded as one would mislead it.
    if (flags & RENAME_EXCHANGE) abort();
    NAMES_BODY(real_renameat2(from_dir, from, to_dir, to, flags), CT_RENAME, from_dir, from, to_dir, to)
}
int link(const char *from, const char *to) { NAMES_BODY(real_link(from, to), CT_LINK, AT_FDCWD, from, AT_FDCWD, to) }
int linkat(int from_dir, const char *from, int to_dir, const char *to, int flags) {
    NAMES_BODY(real_linkat(from_dir, from, to_dir, to, flags), CT_LINK, from_dir, from, to_dir, to)
}

static void named(uint32_t kind, int result, int dirfd, const char *path) {
    char relative[PATH_MAX];
    if (result == 0 && traced_path(dirfd, path, relative)) record(kind, 0, 0, 0, 0, relative, NULL, NULL, 0, 0);
}

#define NAME_BODY(call, kind, dirfd, path)                       \
    LOADED();                                                    \
    pthread_mutex_lock(&lock);                                   \
    int result = call;                                           \
    int saved = errno;                                           \
    named(kind, result, dirfd, path);                            \
    pthread_mutex_unlock(&lock);                                 \
    errno = saved;                                               \
    return result;

int unlink(const char *path) { NAME_BODY(real_unlink(path), CT_UNLINK, AT_FDCWD, path) }
int unlinkat(int dirfd, const char *path, int flags) {
    NAME_BODY(real_unlinkat(dirfd, path, flags), (flags & AT_REMOVEDIR) ? CT_RMDIR : CT_UNLINK, dirfd, path)
}
int mkdir(const char *path, mode_t mode) { NAME_BODY(real_mkdir(path, mode), CT_MKDIR, AT_FDCWD, path) }
int mkdirat(int dirfd, const char *path, mode_t mode) {
    NAME_BODY(real_mkdirat(dirfd, path, mode), CT_MKDIR, dirfd, path)
}
int rmdir(const char *path) { NAME_BODY(real_rmdir(path), CT_RMDIR, AT_FDCWD, path) }

int close(int fd) {
    LOADED();
    if (fd == log_fd && log_fd >= 0) {
        errno = EBADF;  // the trace's descriptor stays open, whatever closes descriptors in bulk
        return -1;
    }
    pthread_mutex_lock(&lock);
    int result = real_close(fd);
    int saved = errno;
    forget(fd);
    pthread_mutex_unlock(&lock);
    errno = saved;
    return result;
}

static int duplicated(int from, int to) {
    if (to >= 0 && from >= 0 && from < CT_MAX_FDS) {
        if (fd_paths[from]) {
            remember(to, fd_paths[from], fd_synchronous[from]);
        } else {
            forget(to);
        }
    }
    return to;
}

int dup(int fd) {
    LOADED();
    pthread_mutex_lock(&lock);
    int result = duplicated(fd, real_dup(fd));
    pthread_mutex_unlock(&lock);
    return result;
}

int dup2(int fd, int to) {
    LOADED();
    pthread_mutex_lock(&lock);
    int result = duplicated(fd, real_dup2(fd, to));
    pthread_mutex_unlock(&lock);
    return result;
}

int dup3(int fd, int to, int flags) {
    LOADED();
    pthread_mutex_lock(&lock);
    int result = duplicated(fd, real_dup3(fd, to, flags));
    pthread_mutex_unlock(&lock);
    return result;
}

static void mapped(int fd, int protection, int flags, void *result) {
    if (result == MAP_FAILED || !(protection & PROT_WRITE) || !(flags & MAP_SHARED) || !fd_path(fd)) return;
    record(CT_MAPPED, 0, 0, 0, 0, fd_path(fd), NULL, NULL, 0, 0);
}

void *mmap(void *address, size_t length, int protection, int flags, int fd, off_t offset) {
    LOADED();
    void *result = real_mmap(address, length, protection, flags, fd, offset);
    if (fd >= 0 && log_fd >= 0) {
        pthread_mutex_lock(&lock);
        mapped(fd, protection, flags, result);
        pthread_mutex_unlock(&lock);
    }
    return result;
}

void *mmap64(void *address, size_t length, int protection, int flags, int fd, off64_t offset) {
    LOADED();
    void *result = real_mmap64(address, length, protection, flags, fd, offset);
    if (fd >= 0 && log_fd >= 0) {
        pthread_mutex_lock(&lock);
        mapped(fd, protection, flags, result);
        pthread_mutex_unlock(&lock);
    }
    return result;
}
