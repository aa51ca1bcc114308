/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libkuai.so loaded as a plugin is loaded: dlopen, a parallel call large
 * enough to start the worker pool (src/parallel.c), dlclose, and the
 * program goes on. The pool's threads are detached and sleep inside the
 * library between jobs; had dlclose unmapped the library, they would sit
 * on a return address into unmapped code, and crash the program the
 * moment one of them woke (a futex wake on the same address from whatever
 * is mapped there next). The library is linked -z nodelete so that
 * dlclose leaves it mapped; this checks that, round after round, any
 * thread the pool started still has the library's code under it, that the
 * next dlopen gets the same pool (no thread added), and that the output
 * matches the single-threaded call.
 * Usage: dlclose path/to/libkuai.so.0   Exit 0 and one "ok" line, or 1.
 */
#define _GNU_SOURCE
#include <kuai.h>

#include <dirent.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define ROUNDS 20
#define LEN (4u << 20) /* 64 pieces of the pool's 64 KiB minimum */
#define THREADS 8u

typedef int (*key_init_fn)(kuai_key *, kuai_cipher, const uint8_t *, size_t);
typedef int (*ctr_fn)(const kuai_key *, uint8_t *, const uint8_t *, uint8_t *, size_t);
typedef int (*ctr_par_fn)(const kuai_key *, uint8_t *, const uint8_t *, uint8_t *, size_t,
                          unsigned);

static int threads_now(void)
{
    DIR *d = opendir("/proc/self/task");
    int n = 0;
    if (!d)
        return -1;
    for (struct dirent *e; (e = readdir(d));)
        n += e->d_name[0] != '.';
    closedir(d);
    return n;
}

/* Whether an executable mapping of the file named like path (its last
 * component, as dlopen resolved it) is in this process. */
static int code_mapped(const char *path)
{
    const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    FILE *f = fopen("/proc/self/maps", "r");
    char line[4096];
    int found = 0;
    if (!f)
        return -1;
    while (fgets(line, sizeof line, f)) {
        char perms[8], *name = strchr(line, '/');
        if (sscanf(line, "%*s %7s", perms) != 1 || perms[2] != 'x' || !name)
            continue;
        name[strcspn(name, "\n")] = 0;
        const char *nbase = strrchr(name, '/') + 1;
        if (strncmp(nbase, base, strlen(base)) == 0)
            found = 1;
    }
    fclose(f);
    return found;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s path/to/libkuai.so.0\n", argv[0]);
        return 2;
    }
    uint8_t *in = malloc(LEN), *par = malloc(LEN), *one = malloc(LEN);
    if (!in || !par || !one)
        return 1;
    for (size_t i = 0; i < LEN; i++)
        in[i] = (uint8_t)(i * 131u + 7u);
    const uint8_t key[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
    int pool = -1;
    for (int round = 0; round < ROUNDS; round++) {
        void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
        if (!h) {
            printf("FAIL: dlopen: %s\n", dlerror());
            return 1;
        }
        key_init_fn key_init = (key_init_fn)dlsym(h, "kuai_key_init");
        ctr_fn ctr = (ctr_fn)dlsym(h, "kuai_ctr_crypt");
        ctr_par_fn ctr_par = (ctr_par_fn)dlsym(h, "kuai_ctr_crypt_parallel");
        if (!key_init || !ctr || !ctr_par) {
            printf("FAIL: dlsym: %s\n", dlerror());
            return 1;
        }
        kuai_key k;
        uint8_t iv1[16] = {0}, iv2[16] = {0};
        if (key_init(&k, KUAI_SM4, key, sizeof key) || ctr_par(&k, iv1, in, par, LEN, THREADS) ||
            ctr(&k, iv2, in, one, LEN)) {
            printf("FAIL: round %d: a call failed\n", round);
            return 1;
        }
        if (memcmp(par, one, LEN) != 0 || memcmp(iv1, iv2, sizeof iv1) != 0) {
            printf("FAIL: round %d: the parallel call differs from the single-threaded one\n",
                   round);
            return 1;
        }
        int started = threads_now() - 1;
        if (started < 1) {
            printf("FAIL: round %d: the parallel call started no thread\n", round);
            return 1;
        }
        if (pool >= 0 && started != pool) {
            printf("FAIL: round %d: %d pool threads, %d after the first round (a second pool)\n",
                   round, started, pool);
            return 1;
        }
        pool = started;
        dlclose(h);
        /* What a plugin host does next: anything, here mapping and
         * touching fresh memory (it may land where the library was). */
        size_t sz = LEN;
        uint8_t *fresh = malloc(sz);
        if (!fresh)
            return 1;
        memset(fresh, 0x5a, sz);
        free(fresh);
        int mapped = code_mapped(argv[1]);
        if (mapped != 1) {
            printf("FAIL: round %d: after dlclose %d pool threads remain and %s is %s\n", round,
                   threads_now() - 1, argv[1], mapped ? "unreadable in /proc" : "unmapped");
            return 1;
        }
    }
    usleep(100 * 1000);
    printf("dlclose: %d rounds of dlopen, SM4-CTR on %d threads, dlclose: one pool of %d threads, "
           "the library stays mapped: ok\n",
           ROUNDS, THREADS, pool);
    return 0;
}
