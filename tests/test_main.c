/* SPDX-License-Identifier: Apache-2.0 */
/*
 * kuai test runner: no framework, one line per failure, a summary per
 * group, and the final line "N passed, N failed" (counts of checks).
 *
 *   kuai_test [--backend NAME] [--part I/N] [--only NAMES] [-q]
 *   kuai_test --list-backends
 *   kuai_test --cpu-features
 *
 * Environment: KUAI_TEST_SEED (PRNG seed, decimal or 0x hex; default: the
 * clock), KUAI_VECTORS_DIR (vector files; default: the source tree),
 * KUAI_TEST_SHORT=1 (shorter random loops for emulated runs; same vectors).
 *
 * --part I/N runs the I-th of N parts of the suite, so that N processes run
 * it side by side (make test-sanitize): each test function below is in
 * exactly one part, and every part runs the backend filter's check.
 * --only NAMES (comma-separated names of suite[] below, e.g. oneshot) runs
 * just those of the part: for work on one group, not for the gates.
 */
#include "test_util.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

unsigned long long t_passed, t_failed;
int t_quiet;
int t_short;
const char *t_only_backend;
uint64_t t_rng_state;

const kuai_cipher all_ciphers[ALL_CIPHERS_N] = {
#define KUAI_CIPHER(id, name, block, key, family) id,
#include "ciphers.def"
};

/* ---- groups and failure lines ------------------------------------------ */

/* A broken kernel fails thousands of checks in one loop; the first few
 * lines say everything, the rest would bury the summary. */
#define MAX_FAIL_LINES_PER_GROUP 40

static const char *group_name = "-";
static unsigned long long group_pass0, group_fail0;
static unsigned group_fail_lines;
static double group_t0;

void group_begin(const char *name)
{
    group_name = name;
    group_pass0 = t_passed;
    group_fail0 = t_failed;
    group_fail_lines = 0;
    group_t0 = now_seconds();
}

void group_end(void)
{
    unsigned long long f = t_failed - group_fail0;
    if (group_fail_lines >= MAX_FAIL_LINES_PER_GROUP)
        printf("  [%s] %llu failure lines not shown\n", group_name, f - MAX_FAIL_LINES_PER_GROUP);
    if (!t_quiet || f)
        printf("%-22s %8llu passed, %llu failed  (%.2f s)\n", group_name, t_passed - group_pass0, f,
               now_seconds() - group_t0);
    fflush(stdout);
    group_name = "-";
}

void t_fail(const char *file, int line, const char *fmt, ...)
{
    t_failed++;
    if (group_fail_lines++ >= MAX_FAIL_LINES_PER_GROUP)
        return;
    const char *slash = strrchr(file, '/');
    printf("FAIL %s:%d [%s] ", slash ? slash + 1 : file, line, group_name);
    va_list ap;
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    putchar('\n');
    fflush(stdout);
}

int t_check(int ok, const char *file, int line, const char *fmt, ...)
{
    if (ok) {
        t_passed++;
        return 1;
    }
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    t_fail(file, line, "%s", msg);
    return 0;
}

void t_note(const char *fmt, ...)
{
    if (t_quiet)
        return;
    va_list ap;
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    putchar('\n');
}

static const char *rc_name(int rc)
{
    switch (rc) {
    case KUAI_OK:
        return "KUAI_OK";
    case KUAI_ERR_ARG:
        return "KUAI_ERR_ARG";
    case KUAI_ERR_KEY_LEN:
        return "KUAI_ERR_KEY_LEN";
    case KUAI_ERR_LENGTH:
        return "KUAI_ERR_LENGTH";
    case KUAI_ERR_BACKEND:
        return "KUAI_ERR_BACKEND";
    case KUAI_ERR_UNSUPPORTED:
        return "KUAI_ERR_UNSUPPORTED";
    case KUAI_ERR_AUTH:
        return "KUAI_ERR_AUTH";
    case KUAI_ERR_MISMATCH:
        return "KUAI_ERR_MISMATCH";
    case KUAI_ERR_KEY:
        return "KUAI_ERR_KEY";
    }
    return "?";
}

int t_check_rc(const char *file, int line, int got, int want, const char *what)
{
    if (got == want) {
        t_passed++;
        return 1;
    }
    t_fail(file, line, "%s: returned %d (%s), want %d (%s)", what, got, rc_name(got), want,
           rc_name(want));
    return 0;
}

void to_hex(char *out, const uint8_t *p, size_t n)
{
    static const char digits[] = "0123456789abcdef";
    for (size_t i = 0; i < n; i++) {
        out[2 * i] = digits[p[i] >> 4];
        out[2 * i + 1] = digits[p[i] & 15];
    }
    out[2 * n] = 0;
}

int t_check_mem(const char *file, int line, const void *got, const void *want, size_t n,
                const char *what)
{
    const uint8_t *g = got, *w = want;
    if (n == 0 || memcmp(g, w, n) == 0) {
        t_passed++;
        return 1;
    }
    size_t first = 0, ndiff = 0;
    while (g[first] == w[first])
        first++;
    for (size_t i = first; i < n; i++)
        ndiff += g[i] != w[i];
    /* Show the 32-byte window (two 16-byte blocks) starting at the
     * 16-aligned offset of the first difference. */
    size_t start = first & ~(size_t)15, cnt = n - start < 32 ? n - start : 32;
    char hg[65], hw[65];
    to_hex(hg, g + start, cnt);
    to_hex(hw, w + start, cnt);
    t_fail(file, line,
           "%s: %zu of %zu bytes differ, first at offset %zu\n"
           "      got  @%zu: %s\n      want @%zu: %s",
           what, ndiff, n, first, start, hg, start, hw);
    return 0;
}

/* ---- PRNG, buffers, time ----------------------------------------------- */

uint64_t rng_u64(void)
{
    uint64_t z = (t_rng_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

size_t rng_below(size_t n)
{
    return (size_t)(rng_u64() % n);
}

void rng_fill(void *p, size_t n)
{
    uint8_t *b = p;
    while (n >= 8) {
        uint64_t v = rng_u64();
        memcpy(b, &v, 8);
        b += 8;
        n -= 8;
    }
    if (n) {
        uint64_t v = rng_u64();
        memcpy(b, &v, n);
    }
}

int is_ublock(kuai_cipher c)
{
    return c == KUAI_UBLOCK_128_128 || c == KUAI_UBLOCK_128_256 || c == KUAI_UBLOCK_256_256;
}

void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) {
        fprintf(stderr, "kuai_test: out of memory (%zu bytes)\n", n);
        exit(2);
    }
    return p;
}

kuai_key *key_alloc(size_t n)
{
    /* Plain malloc, as a user would: kuai_key needs no more alignment. */
    void *p = malloc((n ? n : 1) * sizeof(kuai_key));
    if (!p) {
        fprintf(stderr, "kuai_test: out of memory (%zu keys)\n", n);
        exit(2);
    }
    return p;
}

gbuf gbuf_new(size_t len, size_t off)
{
    gbuf g;
    g.total = GUARD_BYTES + 64 + len + GUARD_BYTES;
    g.base = xmalloc(g.total);
    memset(g.base, GUARD_FILL, g.total);
    /* malloc gives 16-byte alignment; align to 64 ourselves so off is the
     * exact misalignment the code under test sees. */
    uintptr_t a = (uintptr_t)(g.base + GUARD_BYTES);
    a = (a + 63) & ~(uintptr_t)63;
    g.p = (uint8_t *)a + (off & 63);
    g.len = len;
    return g;
}

void gbuf_free(gbuf *g)
{
    free(g->base);
    g->base = g->p = NULL;
}

int gbuf_check_at(const char *file, int line, const gbuf *g, const char *what)
{
    size_t head = (size_t)(g->p - g->base), tail = head + g->len;
    for (size_t i = 0; i < g->total; i++) {
        if (i == head)
            i = tail; /* skip the data area */
        if (i >= g->total)
            break;
        if (g->base[i] != GUARD_FILL) {
            long rel = i < head ? -(long)(head - i) : (long)(i - tail);
            t_fail(file, line,
                   "%s: wrote outside the buffer: byte %s%ld %s the data area "
                   "(len %zu) is %02x",
                   what, rel < 0 ? "" : "+", rel, rel < 0 ? "before" : "after", g->len, g->base[i]);
            return 0;
        }
    }
    t_passed++;
    return 1;
}

double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ---- the stack below the caller ----------------------------------------- */

enum { STACK_SCAN = 64 * 1024 };

/* The patterns' first 8 bytes, sorted: a window of the stack is looked up
 * by its own first 8 (a few thousand patterns of a key's schedule against
 * 64 Ki windows would be 10^8 comparisons one by one). */
static int u64_cmp(const void *a, const void *b)
{
    uint64_t x, y;
    memcpy(&x, a, 8);
    memcpy(&y, b, 8);
    return x < y ? -1 : x > y;
}

static int pattern_at(const uint8_t *sorted, size_t npat, const uint8_t *w)
{
    size_t lo = 0, hi = npat;
    while (lo < hi) { /* the first pattern not below w */
        size_t mid = lo + (hi - lo) / 2;
        if (u64_cmp(sorted + 16 * mid, w) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (; lo < npat && u64_cmp(sorted + 16 * lo, w) == 0; lo++)
        if (memcmp(sorted + 16 * lo + 8, w + 8, 8) == 0)
            return 1;
    return 0;
}

__attribute__((noinline)) size_t stack_holds(const uint8_t *pat, size_t npat, size_t *depth)
{
    uint8_t area[STACK_SCAN];
    /* read as left by earlier calls: the asm stands for a write the
     * compiler cannot see, so it neither warns nor assumes the bytes. Copied
     * to the heap first: the calls below (malloc, qsort) use the stack
     * under this frame, not the area. */
    const volatile uint8_t *a = area;
    __asm__ volatile("" : "+r"(a) : : "memory");
    uint8_t *copy = xmalloc(STACK_SCAN), *sorted = xmalloc(16 * npat + 1);
    for (size_t i = 0; i < STACK_SCAN; i++)
        copy[i] = a[i];
    memcpy(sorted, pat, 16 * npat);
    qsort(sorted, npat, 16, u64_cmp);
    size_t found = 0;
    for (size_t i = 0; i + 16 <= STACK_SCAN; i++)
        if (pattern_at(sorted, npat, copy + i) && found++ == 0 && depth)
            *depth = STACK_SCAN - i;
    free(sorted);
    free(copy);
    return found;
}

__attribute__((noinline)) void stack_fill(uint8_t v)
{
    /* a KiB more than stack_holds and stack_unwiped read: their frames
     * need not start where this one does */
    uint8_t area[STACK_SCAN + 1024];
    memset(area, v, sizeof area);
    __asm__ volatile("" : : "r"(area) : "memory");
}

void stack_clear(void)
{
    stack_fill(0);
}

__attribute__((noinline)) size_t stack_unwiped(uint8_t v)
{
    uint8_t area[STACK_SCAN];
    const volatile uint8_t *a = area; /* as in stack_holds */
    __asm__ volatile("" : "+r"(a) : : "memory");
    size_t i = 0;
    while (i < STACK_SCAN && a[i] == v)
        i++;
    for (size_t j = i; j < i + 64 && j < STACK_SCAN; j++)
        if (a[j] != 0)
            return STACK_SCAN - i;
    return 0;
}

/* ---- backends ---------------------------------------------------------- */

size_t usable_backends(kuai_cipher c, const char **names, size_t max)
{
    size_t n = kuai_backends(c, names, max);
    return n < max ? n : max;
}

size_t test_backends(kuai_cipher c, const char **names, size_t max)
{
    const char *all[MAX_BACKENDS];
    size_t n = usable_backends(c, all, MAX_BACKENDS), out = 0;
    for (size_t i = 0; i < n; i++) {
        if (t_only_backend && strcmp(all[i], t_only_backend) != 0)
            continue;
        if (out < max)
            names[out] = all[i];
        out++;
    }
    return out < max ? out : max;
}

int key_init_ok(kuai_key *k, kuai_cipher c, const uint8_t *key, const char *backend)
{
    int rc = kuai_key_init_backend(k, c, key, kuai_key_size(c), backend);
    char what[96];
    snprintf(what, sizeof what, "kuai_key_init_backend(%s, %s)", kuai_cipher_name(c), backend);
    return CHECK_RC(rc, KUAI_OK, what);
}

/* ---- main -------------------------------------------------------------- */

static uint64_t parse_seed(const char *s)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 0);
    if (errno || *end || end == s) {
        fprintf(stderr, "kuai_test: KUAI_TEST_SEED=%s is not a number\n", s);
        exit(2);
    }
    return (uint64_t)v;
}

/* Every backend name usable on this CPU (any cipher), once each, one a
 * line: what make test-cross runs one by one. */
static int list_backends(void)
{
    const char *seen[ALL_CIPHERS_N * MAX_BACKENDS];
    size_t nseen = 0;
    for (size_t ci = 0; ci < ALL_CIPHERS_N; ci++) {
        const char *names[MAX_BACKENDS];
        size_t n = usable_backends(all_ciphers[ci], names, MAX_BACKENDS);
        for (size_t i = 0; i < n; i++) {
            size_t j = 0;
            while (j < nseen && strcmp(seen[j], names[i]) != 0)
                j++;
            if (j == nseen) {
                seen[nseen++] = names[i];
                printf("%s\n", names[i]);
            }
        }
    }
    return 0;
}

/* kuai_cpu_feature_names, one a line: what make test-cross shows per
 * emulated architecture (the line kuai info prints there). */
static int list_cpu_features(void)
{
    const char *names[64];
    size_t n = kuai_cpu_feature_names(names, 64);
    for (size_t i = 0; i < n && i < 64; i++)
        printf("%s\n", names[i]);
    return 0;
}

/* ---- the suite's test functions, and its parts -------------------------- */

/* weight: the function's seconds under AddressSanitizer and UBSan (make
 * test-sanitize's Debug build, full loops, one process: 440 s in all),
 * AMD EPYC Zen 3, 2026-12-06, 1 for those under a second. --part N splits
 * the suite by these, the heaviest first into the lightest part so far;
 * another CPU or build shifts them all alike. */
static const struct suite_fn {
    void (*fn)(void);
    const char *name;
    unsigned weight;
} suite[] = {
    {test_api_helpers, "api_helpers", 1},
    {test_api_errors, "api_errors", 1},
    {test_api_env, "api_env", 1},
    {test_ublock_spec, "ublock_spec", 1},
    {test_vector_files, "vector_files", 1},
    {test_ublock_backend_internals, "ublock_backend_internals", 12},
    {test_sm4_backend_internals, "sm4_backend_internals", 3},
    {test_sm4_cryptography_vectors, "sm4_cryptography_vectors", 1},
    {test_sm4_openssl, "sm4_openssl", 15},
    {test_aes_backend_internals, "aes_backend_internals", 1},
    {test_aes_fips197, "aes_fips197", 1},
    {test_aes_cryptography_vectors, "aes_cryptography_vectors", 9},
    {test_aes_openssl, "aes_openssl", 8},
    {test_aes_monte_carlo, "aes_monte_carlo", 4},
    {test_aes_sw, "aes_sw", 1},
    {test_modes_diff, "modes_diff", 54},
    {test_modes_unaligned, "modes_unaligned", 1},
    {test_modes_multi, "modes_multi", 54},
    {test_modes_threads, "modes_threads", 11},
    {test_modes_key_placement, "modes_key_placement", 1},
    {test_gcm, "gcm", 11},
    {test_modes_ext, "modes_ext", 18},
    {test_wycheproof, "wycheproof", 1},
    {test_kw, "kw", 126},
    {test_parallel, "parallel", 75},
    {test_oneshot, "oneshot", 24},
    {test_guard_pages, "guard_pages", 2},
    {test_misuse, "misuse", 12},
};
#define SUITE_N (sizeof suite / sizeof suite[0])
#define MAX_PARTS 16

/* part_of[i]: the part (0-based) of suite[i] among n */
static void split_suite(unsigned n, unsigned *part_of)
{
    unsigned long load[MAX_PARTS] = {0};
    int done[SUITE_N] = {0};
    for (size_t k = 0; k < SUITE_N; k++) {
        size_t heaviest = SUITE_N;
        for (size_t i = 0; i < SUITE_N; i++)
            if (!done[i] && (heaviest == SUITE_N || suite[i].weight > suite[heaviest].weight))
                heaviest = i;
        unsigned lightest = 0;
        for (unsigned p = 1; p < n; p++)
            if (load[p] < load[lightest])
                lightest = p;
        part_of[heaviest] = lightest;
        load[lightest] += suite[heaviest].weight;
        done[heaviest] = 1;
    }
}

/* "I/N" with 1 <= I <= N <= MAX_PARTS */
static int parse_part(const char *s, unsigned *part, unsigned *parts)
{
    char *end;
    unsigned long i = strtoul(s, &end, 10);
    if (end == s || *end != '/')
        return 0;
    const char *t = end + 1;
    unsigned long n = strtoul(t, &end, 10);
    if (end == t || *end || n < 1 || n > MAX_PARTS || i < 1 || i > n)
        return 0;
    *part = (unsigned)i - 1;
    *parts = (unsigned)n;
    return 1;
}

/* name among the comma-separated names of list */
static int name_listed(const char *list, const char *name)
{
    const size_t n = strlen(name);
    for (const char *p = list; *p;) {
        const char *e = strchr(p, ',');
        const size_t len = e ? (size_t)(e - p) : strlen(p);
        if (len == n && strncmp(p, name, n) == 0)
            return 1;
        p += len + (e != NULL);
    }
    return 0;
}

static void usage(void)
{
    fprintf(stderr, "usage: kuai_test [--backend NAME] [--part I/N] [--only NAMES] [-q] | "
                    "--list-backends | --cpu-features\n");
    exit(2);
}

int main(int argc, char **argv)
{
    unsigned part = 0, parts = 1;
    const char *only = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--backend") == 0 && i + 1 < argc)
            t_only_backend = argv[++i];
        else if (strncmp(argv[i], "--backend=", 10) == 0)
            t_only_backend = argv[i] + 10;
        else if (strcmp(argv[i], "--part") == 0 && i + 1 < argc) {
            if (!parse_part(argv[++i], &part, &parts))
                usage();
        } else if (strcmp(argv[i], "--only") == 0 && i + 1 < argc)
            only = argv[++i];
        else if (strcmp(argv[i], "-q") == 0)
            t_quiet = 1;
        else if (strcmp(argv[i], "--list-backends") == 0)
            return list_backends();
        else if (strcmp(argv[i], "--cpu-features") == 0)
            return list_cpu_features();
        else
            usage();
    }

    const char *short_env = getenv("KUAI_TEST_SHORT");
    t_short = short_env && *short_env && strcmp(short_env, "0") != 0;
    const char *seed_env = getenv("KUAI_TEST_SEED");
    uint64_t seed = seed_env && *seed_env
                        ? parse_seed(seed_env)
                        : (uint64_t)time(NULL) ^ ((uint64_t)(now_seconds() * 1e9) << 20);
    t_rng_state = seed;
    printf("kuai %s test: seed KUAI_TEST_SEED=0x%016" PRIx64 "%s%s%s\n", KUAI_VERSION, seed,
           t_only_backend ? ", backend " : "", t_only_backend ? t_only_backend : "",
           t_short ? ", short loops (KUAI_TEST_SHORT)" : "");
    unsigned part_of[SUITE_N] = {0};
    split_suite(parts, part_of);
    if (parts > 1) {
        printf("part %u/%u:", part + 1, parts);
        for (size_t i = 0; i < SUITE_N; i++)
            if (part_of[i] == part)
                printf(" %s", suite[i].name);
        printf("\n");
    }
    fflush(stdout);

    double t0 = now_seconds();

    /* A --backend that no cipher offers would make every backend loop empty
     * and the run vacuous: that is a failure, not a pass. */
    if (t_only_backend) {
        group_begin("backend filter");
        size_t found = 0;
        for (size_t i = 0; i < ALL_CIPHERS_N; i++) {
            const char *names[MAX_BACKENDS];
            found += test_backends(all_ciphers[i], names, MAX_BACKENDS);
        }
        CHECK(found > 0, "--backend %s: no cipher has a usable backend of that name",
              t_only_backend);
        group_end();
    }

    size_t ran = 0;
    for (size_t i = 0; i < SUITE_N; i++)
        if (part_of[i] == part && (!only || name_listed(only, suite[i].name))) {
            suite[i].fn();
            ran++;
        }
    if (only && ran == 0) {
        fprintf(stderr, "kuai_test: --only %s: no such test in this part\n", only);
        return 2;
    }

    if (!t_quiet)
        printf("total time %.2f s, seed 0x%016" PRIx64 "\n", now_seconds() - t0, seed);
    printf("%llu passed, %llu failed\n", t_passed, t_failed);
    return t_failed ? 1 : 0;
}
