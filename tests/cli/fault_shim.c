/* SPDX-License-Identifier: Apache-2.0 */
/*
 * LD_PRELOAD fault injector for the kuai tool (tests/cli/test_faults.py).
 *
 * Counts the calls the kuai executable itself makes (calls from libc or
 * libcrypto are passed through uncounted: the return address must lie in
 * the main program's code) to each function below, and makes the Nth call
 * of one of them fail:
 *
 *   KUAI_FAULT=FUNC:N         the Nth call of FUNC fails (errno as a real
 *                             failure would set it)
 *   KUAI_FAULT=write:N:short  the Nth write writes half its bytes and says so
 *   KUAI_FAULT_ALSO=unlink    and every unlink and unlinkat fails too (a second fault:
 *                             the temporary file cannot be removed)
 *   KUAI_FAULT_LOG=FILE       appends "inject FUNC N WHAT" when it fails a
 *                             call (WHAT: the path, "fd=K PATH" for a
 *                             descriptor, or "memory", "scrypt", ...) and,
 *                             at exit, "count FUNC N" for every FUNC called
 *   KUAI_FAULT_SECRETS=HEX[,HEX...]
 *                             byte strings (16..64 bytes: keys, derived
 *                             keys) the tool must have wiped by the time it
 *                             ends: at exit (a destructor: after exit(),
 *                             fail() included) and when the tool's signal
 *                             handler calls raise() to end the process,
 *                             every resident writable mapping is searched
 *                             for them, and each one found is logged as
 *                             "secret-found I WHEN MAPPING" (I: its index
 *                             in the list; WHEN: exit or raise), after a
 *                             line "scanned WHEN"
 *   KUAI_FAULT_SWAP=PATH=TARGET
 *                             when the main program opens PATH for reading,
 *                             PATH is first made a link to TARGET (as
 *                             another process could, between kuai's checks
 *                             on the name and its open): the file opened is
 *                             TARGET's
 *   KUAI_FAULT_SWAP_OUT=PATH=TARGET
 *                             the same when the main program opens PATH
 *                             for writing (an output classified as a
 *                             device or FIFO that is a regular file by the
 *                             time it is opened)
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

/* clang-format off */
#define FUNCS(X)                                                                                   \
    X(open) X(openat) X(fopen) X(read) X(write) X(fsync) X(close) X(fchmod)           \
    X(link) X(linkat) X(rename) X(renameat) X(renameat2) X(unlink) X(unlinkat) X(malloc)          \
    X(calloc) X(realloc)                                                                           \
    X(posix_memalign) X(strdup) X(realpath) X(pthread_create) X(EVP_PBE_scrypt) X(RAND_bytes)
/* clang-format on */

enum {
#define X(f) F_##f,
    FUNCS(X)
#undef X
        NFUNCS
};
static const char *const names[] = {
#define X(f) #f,
    FUNCS(X)
#undef X
};

static unsigned long counts[NFUNCS];
static int fault_func = -1;
static unsigned long fault_n;
static int fault_short;
static int unlink_always;
static const char *log_path;
static uintptr_t main_lo, main_hi; /* the main program's executable segment(s) */

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);

static int find_main(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    (void)data;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X)) {
            uintptr_t lo = info->dlpi_addr + ph->p_vaddr, hi = lo + ph->p_memsz;
            if (!main_lo || lo < main_lo)
                main_lo = lo;
            if (hi > main_hi)
                main_hi = hi;
        }
    }
    return 1; /* the first object is the main program */
}

static void log_line(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void log_line(const char *fmt, ...)
{
    if (!log_path)
        return;
    char buf[4200];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if ((size_t)n >= sizeof buf)
        n = sizeof buf - 1;
    /* raw system calls: the shim's own writes are not the tool's */
    long fd =
        syscall(SYS_openat, AT_FDCWD, log_path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
    if (fd >= 0) {
        if (syscall(SYS_write, fd, buf, (size_t)n) < 0) {
            /* nothing to do: the test then sees no log line */
        }
        syscall(SYS_close, fd);
    }
}

/* ---- KUAI_FAULT_SECRETS ---- */

/* Kept inverted (each byte complemented), so that the shim's own memory
 * never holds the bytes it searches for. */
#define MAX_SECRETS 8
#define SECRET_MAX 64
static unsigned char secret_inv[MAX_SECRETS][SECRET_MAX];
static size_t secret_len[MAX_SECRETS];
static int nsecrets;

static int hexval(char c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

static void secrets_init(const char *spec)
{
    while (spec && *spec && nsecrets < MAX_SECRETS) {
        size_t n = 0;
        int hi, lo;
        while ((hi = hexval(spec[0])) >= 0 && (lo = hexval(spec[1])) >= 0 && n < SECRET_MAX) {
            secret_inv[nsecrets][n++] = (unsigned char)~(hi << 4 | lo);
            spec += 2;
        }
        if (n >= 16)
            secret_len[nsecrets++] = n;
        spec = strchr(spec, ',');
        if (spec)
            spec++;
    }
}

/* Searches [p, end) for every secret. */
static void search(const unsigned char *p, const unsigned char *end, const char *when,
                   const char *name)
{
    for (int k = 0; k < nsecrets; k++) {
        size_t n = secret_len[k];
        const unsigned char *inv = secret_inv[k];
        for (const unsigned char *q = p; end - q >= (ptrdiff_t)n; q++) {
            q = memchr(q, (unsigned char)~inv[0], (size_t)(end - q) - n + 1);
            if (!q)
                break;
            size_t j = 1;
            while (j < n && (unsigned char)(q[j] ^ inv[j]) == 0xff)
                j++;
            if (j == n) {
                log_line("secret-found %d %s %s\n", k, when, name);
                break;
            }
        }
    }
}

/* The resident pages of [lo, hi), in runs (a page never touched holds no
 * secret, and a thread's 8 MiB stack is mostly such pages). */
static void scan_region(uintptr_t lo, uintptr_t hi, const char *when, const char *name)
{
    static unsigned char vec[4096];
    const uintptr_t page = 4096;
    uintptr_t run = 0; /* start of the current run of resident pages, 0: none */
    for (uintptr_t a = lo; a < hi;) {
        size_t len = hi - a < sizeof vec * page ? hi - a : sizeof vec * page;
        if (mincore((void *)a, len, vec) != 0)
            memset(vec, 1, sizeof vec); /* cannot tell: read it all */
        for (size_t i = 0; i < len / page; i++, a += page) {
            if (vec[i] & 1) {
                if (!run)
                    run = a;
            } else if (run) {
                search((const unsigned char *)run, (const unsigned char *)a, when, name);
                run = 0;
            }
        }
    }
    if (run)
        search((const unsigned char *)run, (const unsigned char *)hi, when, name);
}

/* Every readable and writable mapping (raw system calls and no allocation:
 * this runs in the tool's signal handler too). */
static void scan_secrets(const char *when)
{
    static char maps[1 << 20];
    if (!nsecrets)
        return;
    log_line("scanned %s\n", when);
    long fd = syscall(SYS_openat, AT_FDCWD, "/proc/self/maps", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    size_t n = 0;
    for (;;) {
        long r = syscall(SYS_read, fd, maps + n, sizeof maps - 1 - n);
        if (r <= 0)
            break;
        n += (size_t)r;
    }
    syscall(SYS_close, fd);
    maps[n] = '\0';
    for (char *line = maps; *line;) {
        char *nl = strchr(line, '\n');
        if (nl)
            *nl = '\0';
        unsigned long lo, hi;
        char perms[8] = "", name[512] = "";
        if (sscanf(line, "%lx-%lx %7s %*s %*s %*s %511s", &lo, &hi, perms, name) >= 3 &&
            perms[0] == 'r' && perms[1] == 'w')
            scan_region(lo, hi, when, name[0] ? name : "[anonymous]");
        if (!nl)
            break;
        line = nl + 1;
    }
}

__attribute__((constructor)) static void shim_init(void)
{
    dl_iterate_phdr(find_main, NULL);
    log_path = getenv("KUAI_FAULT_LOG");
    secrets_init(getenv("KUAI_FAULT_SECRETS"));
    const char *spec = getenv("KUAI_FAULT");
    if (!spec)
        return;
    const char *colon = strchr(spec, ':');
    if (!colon)
        return;
    for (int i = 0; i < NFUNCS; i++)
        if (strlen(names[i]) == (size_t)(colon - spec) &&
            !strncmp(spec, names[i], strlen(names[i])))
            fault_func = i;
    fault_n = strtoul(colon + 1, NULL, 10);
    fault_short = strstr(colon + 1, ":short") != NULL;
    const char *also = getenv("KUAI_FAULT_ALSO");
    unlink_always = also && !strcmp(also, "unlink");
}

__attribute__((destructor)) static void shim_fini(void)
{
    scan_secrets("exit");
    for (int i = 0; i < NFUNCS; i++)
        if (counts[i])
            log_line("count %s %lu\n", names[i], counts[i]);
}

/* Counts a call made by the main program; true when this one must fail. */
/* A call made by the main program's code, not by a library's. */
static int from_main(void *ret)
{
    uintptr_t a = (uintptr_t)ret;
    return a >= main_lo && a < main_hi;
}

static int hit(int f, void *ret)
{
    if (!from_main(ret))
        return 0;
    unsigned long n = __atomic_add_fetch(&counts[f], 1, __ATOMIC_RELAXED);
    return f == fault_func && n == fault_n;
}
#define HIT(f) hit(F_##f, __builtin_return_address(0))

static void describe_fd(const char *func, int fd)
{
    char link[64], path[4096];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, path, sizeof path - 1);
    path[n > 0 ? n : 0] = '\0';
    log_line("inject %s %lu fd=%d %s\n", func, fault_n, fd, path);
}

static void describe(const char *func, const char *what)
{
    log_line("inject %s %lu %s\n", func, fault_n, what);
}

/* A path relative to a directory handle as the whole path (the test names
 * files by it): the handle's path and the name. */
static void at_path(int dfd, const char *name, char *whole, size_t size)
{
    char link[64], dir[4096];
    ssize_t n = -1;
    if (dfd != AT_FDCWD && name[0] != '/') {
        snprintf(link, sizeof link, "/proc/self/fd/%d", dfd);
        n = readlink(link, dir, sizeof dir - 1);
    }
    dir[n > 0 ? n : 0] = '\0';
    snprintf(whole, size, "%s%s%s", dir, n > 0 ? "/" : "", name);
}

static void describe_at(const char *func, int dfd, const char *name)
{
    char whole[8192];
    at_path(dfd, name, whole, sizeof whole);
    describe(func, whole);
}

/* KUAI_FAULT_SWAP (an open for reading) or KUAI_FAULT_SWAP_OUT (one for
 * writing): PATH becomes a hard link to TARGET (a link beside it, renamed
 * over it), once. */
static void swap_before_open(const char *path, int flags)
{
    static int done;
    const int reading = (flags & O_ACCMODE) == O_RDONLY;
    const char *spec = getenv(reading ? "KUAI_FAULT_SWAP" : "KUAI_FAULT_SWAP_OUT");
    const char *eq = spec ? strchr(spec, '=') : NULL;
    if (done || !eq || strlen(path) != (size_t)(eq - spec) ||
        strncmp(path, spec, (size_t)(eq - spec)) != 0)
        return;
    done = 1;
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.swap", path);
    if (syscall(SYS_linkat, AT_FDCWD, eq + 1, AT_FDCWD, tmp, 0) != 0 ||
        syscall(SYS_renameat2, AT_FDCWD, tmp, AT_FDCWD, path, 0) != 0)
        log_line("swap %s failed\n", path);
    else
        log_line("swapped %s\n", path);
}

#define REAL(ret, name, ...)                                                                       \
    static ret (*real_fn)(__VA_ARGS__);                                                            \
    if (!real_fn)                                                                                  \
    *(void **)&real_fn = dlsym(RTLD_NEXT, name)

int open(const char *path, int flags, ...)
{
    mode_t mode = 0;
    if (flags & (O_CREAT | O_TMPFILE)) {
        va_list ap;
        va_start(ap, flags);
        mode = (mode_t)va_arg(ap, int);
        va_end(ap);
    }
    if (HIT(open)) {
        describe("open", path);
        errno = EACCES;
        return -1;
    }
    if (from_main(__builtin_return_address(0)))
        swap_before_open(path, flags);
    return (int)syscall(SYS_openat, AT_FDCWD, path, flags, mode);
}
int open64(const char *path, int flags, ...) __attribute__((alias("open")));

int openat(int dfd, const char *path, int flags, ...)
{
    mode_t mode = 0;
    if (flags & (O_CREAT | O_TMPFILE)) {
        va_list ap;
        va_start(ap, flags);
        mode = (mode_t)va_arg(ap, int);
        va_end(ap);
    }
    if (HIT(openat)) {
        describe_at("openat", dfd, path);
        errno = EACCES;
        return -1;
    }
    if (dfd == AT_FDCWD && from_main(__builtin_return_address(0)))
        swap_before_open(path, flags);
    return (int)syscall(SYS_openat, dfd, path, flags, mode);
}

FILE *fopen(const char *path, const char *mode)
{
    REAL(FILE *, "fopen", const char *, const char *);
    if (HIT(fopen)) {
        describe("fopen", path);
        errno = EACCES;
        return NULL;
    }
    return real_fn(path, mode);
}

ssize_t read(int fd, void *buf, size_t n)
{
    if (HIT(read)) {
        describe_fd("read", fd);
        errno = EIO;
        return -1;
    }
    return syscall(SYS_read, fd, buf, n);
}

ssize_t write(int fd, const void *buf, size_t n)
{
    if (HIT(write)) {
        describe_fd("write", fd);
        if (fault_short && n > 1)
            return syscall(SYS_write, fd, buf, n / 2);
        if (!fault_short) {
            errno = ENOSPC;
            return -1;
        }
    }
    return syscall(SYS_write, fd, buf, n);
}

int fsync(int fd)
{
    if (HIT(fsync)) {
        describe_fd("fsync", fd);
        errno = EIO;
        return -1;
    }
    return (int)syscall(SYS_fsync, fd);
}

int close(int fd)
{
    if (HIT(close)) {
        /* as NFS can: the descriptor is closed, the error reported */
        describe_fd("close", fd);
        syscall(SYS_close, fd);
        errno = EIO;
        return -1;
    }
    return (int)syscall(SYS_close, fd);
}

int fchmod(int fd, mode_t mode)
{
    if (HIT(fchmod)) {
        describe_fd("fchmod", fd);
        errno = EPERM;
        return -1;
    }
    return (int)syscall(SYS_fchmod, fd, mode);
}

int link(const char *a, const char *b)
{
    if (HIT(link)) {
        describe("link", b);
        errno = EIO;
        return -1;
    }
    return (int)syscall(SYS_linkat, AT_FDCWD, a, AT_FDCWD, b, 0);
}

int linkat(int da, const char *a, int db, const char *b, int flags)
{
    if (HIT(linkat)) {
        describe_at("linkat", db, b);
        errno = EIO;
        return -1;
    }
    return (int)syscall(SYS_linkat, da, a, db, b, flags);
}

int rename(const char *a, const char *b)
{
    if (HIT(rename)) {
        describe("rename", b);
        errno = EIO;
        return -1;
    }
    return (int)syscall(SYS_renameat2, AT_FDCWD, a, AT_FDCWD, b, 0);
}

int renameat(int da, const char *a, int db, const char *b)
{
    if (HIT(renameat)) {
        describe_at("renameat", db, b);
        errno = EIO;
        return -1;
    }
    return (int)syscall(SYS_renameat2, da, a, db, b, 0);
}

int renameat2(int da, const char *a, int db, const char *b, unsigned flags)
{
    if (HIT(renameat2)) {
        describe_at("renameat2", db, b);
        errno = EIO;
        return -1;
    }
    return (int)syscall(SYS_renameat2, da, a, db, b, flags);
}

int unlink(const char *path)
{
    uintptr_t ret = (uintptr_t)__builtin_return_address(0);
    if (HIT(unlink)) {
        describe("unlink", path);
        errno = EIO;
        return -1;
    }
    if (unlink_always && ret >= main_lo && ret < main_hi) {
        log_line("unlink-failed %s\n", path);
        errno = EIO;
        return -1;
    }
    return (int)syscall(SYS_unlinkat, AT_FDCWD, path, 0);
}

int unlinkat(int dfd, const char *path, int flags)
{
    uintptr_t ret = (uintptr_t)__builtin_return_address(0);
    if (HIT(unlinkat)) {
        describe_at("unlinkat", dfd, path);
        errno = EIO;
        return -1;
    }
    if (unlink_always && ret >= main_lo && ret < main_hi) {
        char whole[8192];
        at_path(dfd, path, whole, sizeof whole);
        log_line("unlink-failed %s\n", whole);
        errno = EIO;
        return -1;
    }
    return (int)syscall(SYS_unlinkat, dfd, path, flags);
}

void *malloc(size_t n)
{
    if (HIT(malloc)) {
        describe("malloc", "memory");
        errno = ENOMEM;
        return NULL;
    }
    return __libc_malloc(n);
}

void *calloc(size_t a, size_t b)
{
    if (HIT(calloc)) {
        describe("calloc", "memory");
        errno = ENOMEM;
        return NULL;
    }
    return __libc_calloc(a, b);
}

void *realloc(void *p, size_t n)
{
    if (HIT(realloc)) {
        describe("realloc", "memory");
        errno = ENOMEM;
        return NULL;
    }
    return __libc_realloc(p, n);
}

int posix_memalign(void **p, size_t align, size_t n)
{
    if (HIT(posix_memalign)) {
        describe("posix_memalign", "memory");
        return ENOMEM;
    }
    void *q = __libc_memalign(align, n ? n : 1);
    if (!q)
        return ENOMEM;
    *p = q;
    return 0;
}

char *strdup(const char *s)
{
    if (HIT(strdup)) {
        describe("strdup", "memory");
        errno = ENOMEM;
        return NULL;
    }
    size_t n = strlen(s) + 1;
    char *d = __libc_malloc(n);
    if (d)
        memcpy(d, s, n);
    return d;
}

char *realpath(const char *path, char *resolved)
{
    REAL(char *, "realpath", const char *, char *);
    if (HIT(realpath)) {
        describe("realpath", path);
        errno = ENOMEM;
        return NULL;
    }
    return real_fn(path, resolved);
}

int pthread_create(pthread_t *t, const pthread_attr_t *attr, void *(*fn)(void *), void *arg)
{
    REAL(int, "pthread_create", pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);
    if (HIT(pthread_create)) {
        describe("pthread_create", "thread");
        return EAGAIN;
    }
    return real_fn(t, attr, fn, arg);
}

int EVP_PBE_scrypt(const char *pass, size_t passlen, const unsigned char *salt, size_t saltlen,
                   uint64_t N, uint64_t r, uint64_t p, uint64_t maxmem, unsigned char *key,
                   size_t keylen)
{
    REAL(int, "EVP_PBE_scrypt", const char *, size_t, const unsigned char *, size_t, uint64_t,
         uint64_t, uint64_t, uint64_t, unsigned char *, size_t);
    if (HIT(EVP_PBE_scrypt)) {
        describe("EVP_PBE_scrypt", "scrypt");
        return 0;
    }
    return real_fn(pass, passlen, salt, saltlen, N, r, p, maxmem, key, keylen);
}

int RAND_bytes(unsigned char *buf, int num)
{
    REAL(int, "RAND_bytes", unsigned char *, int);
    if (HIT(RAND_bytes)) {
        describe("RAND_bytes", "RAND_bytes");
        return 0;
    }
    return real_fn(buf, num);
}

/* The tool's signal handler ends the process with raise() once it has
 * cleaned up and set the signal's default action back: the last moment to
 * look. (Not told by the caller's address: the handler's raise is a tail
 * call, whose return address is the signal trampoline's.) */
int raise(int sig)
{
    REAL(int, "raise", int);
    struct sigaction sa;
    if (sigaction(sig, NULL, &sa) == 0 && sa.sa_handler == SIG_DFL && sig != SIGCHLD &&
        sig != SIGCONT && sig != SIGURG && sig != SIGWINCH && sig != SIGTSTP && sig != SIGTTIN &&
        sig != SIGTTOU && sig != SIGSTOP)
        scan_secrets("raise");
    return real_fn(sig);
}
