/* SPDX-License-Identifier: Apache-2.0 */
/* kuai_bench's rows: the table for people, the pipe from a child process
 * (--child-rows) and the JSON for bench/plot.py. */
#define _XOPEN_SOURCE 700 /* realpath */

#include "bench.h"
#include "bench_internal.h"
#include "bench_ublock_paper.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

row *rows;
size_t nrows;
static size_t caprows;
int row_fd = -1;

#define TABLE_FMT "%-15s %-14s %-7s %-10s %3s %9s %8s %9s  %-39s %9s %7s\n"

void print_header_row(void)
{
    printf(TABLE_FMT, "cipher", "mode", "backend", "size", "thr", "MB/s", "cyc/B", "ns/call",
           "peer", "peer MB/s", "ratio");
}

static void fmtnum(char *buf, size_t n, double v, int prec)
{
    if (isnan(v))
        snprintf(buf, n, "-");
    else
        snprintf(buf, n, "%.*f", prec, v);
}

static void print_row(const row *r)
{
    char thr[8], mb[24], cpb[24], ns[24], pmb[24], ra[24];
    snprintf(thr, sizeof thr, "%d", r->threads);
    fmtnum(mb, sizeof mb, r->mbps, 1);
    fmtnum(cpb, sizeof cpb, r->cpb, 2);
    fmtnum(ns, sizeof ns, r->ns_call, 1);
    fmtnum(pmb, sizeof pmb, r->peer_mbps, 1);
    /* ref backends sit far below the yardstick: keep small ratios readable */
    fmtnum(ra, sizeof ra, r->ratio, !isnan(r->ratio) && r->ratio < 0.1 ? 4 : 3);
    printf(TABLE_FMT, r->cipher, r->mode, r->backend, r->size, thr, mb, cpb, ns,
           r->peer[0] ? r->peer : "-", pmb, ra);
    fflush(stdout); /* rows appear as they are measured */
}

static void size_label(char *buf, size_t n, size_t streams, size_t len)
{
    char one[24];
    /* binary sizes for the paper's buffers, decimal for the SM4 report's
     * 320 Kbit ... 320 Mbit texts */
    if (len % 1024 == 0)
        snprintf(one, sizeof one, "%zuKiB", len / 1024);
    else if (len % 1000000 == 0)
        snprintf(one, sizeof one, "%zuMB", len / 1000000);
    else if (len % 1000 == 0)
        snprintf(one, sizeof one, "%zuKB", len / 1000);
    else
        snprintf(one, sizeof one, "%zuB", len);
    if (streams > 1)
        snprintf(buf, n, "%zux%s", streams, one);
    else
        snprintf(buf, n, "%s", one);
}

row *row_new(void)
{
    if (nrows == caprows) {
        caprows = caprows ? caprows * 2 : 64;
        rows = realloc(rows, caprows * sizeof *rows);
        if (!rows)
            die("out of memory");
    }
    row *r = &rows[nrows++];
    memset(r, 0, sizeof *r);
    return r;
}

void add_row(const ctx *x, const char *mode, const job *a, const job *b, int short_msg,
             size_t streams, size_t len, int threads)
{
    row *r = row_new();
    snprintf(r->cipher, sizeof r->cipher, "%s", x->cname);
    snprintf(r->mode, sizeof r->mode, "%s", mode);
    snprintf(r->backend, sizeof r->backend, "%s", x->backend);
    size_label(r->size, sizeof r->size, streams, len);
    r->bytes = a->bytes;
    r->threads = threads;
    r->mbps = mbps_of(a);
    r->cpb = HAVE_TSC ? a->best_ticks / (double)a->bytes : NAN;
    r->ns_call = short_msg ? a->best_ns : NAN;
    r->peer_mbps = r->ratio = NAN;
    if (b) {
        x->pr->ops->label(x->pr, r->peer, sizeof r->peer);
        r->peer_mbps = mbps_of(b);
        r->ratio = r->mbps / r->peer_mbps;
    }
    print_row(r);
    if (row_fd >= 0) {
        /* A child hands its rows to the parent's table and JSON: same
         * binary, so the struct goes as it is. */
        const char *p = (const char *)r;
        for (size_t left = sizeof *r; left;) {
            ssize_t w = write(row_fd, p, left);
            if (w <= 0)
                die("writing a row to the parent: %s", strerror(errno));
            p += w;
            left -= (size_t)w;
        }
    }
}

void bench_paper_json_row(const bench_paper_row *p, const char *peer_name, double peer_mbps,
                          double ratio)
{
    row *r = row_new();
    snprintf(r->cipher, sizeof r->cipher, "%s", p->cipher);
    snprintf(r->mode, sizeof r->mode, "paper: %s", p->what);
    snprintf(r->backend, sizeof r->backend, "%s", p->backend);
    snprintf(r->size, sizeof r->size, "%s", p->size);
    snprintf(r->peer, sizeof r->peer, "%s", peer_name ? peer_name : "");
    r->bytes = p->bytes;
    r->threads = 1;
    r->mbps = (double)p->bytes * 1e3 / p->ns;
    r->cpb = p->ticks / (double)p->bytes;
    r->ns_call = p->is_short ? p->ns : NAN;
    r->peer_mbps = peer_mbps;
    r->ratio = ratio;
}

static void json_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\')
            fprintf(f, "\\%c", ch);
        else if (ch < 0x20)
            fprintf(f, "\\u%04x", ch);
        else
            fputc(ch, f);
    }
    fputc('"', f);
}

static void json_num(FILE *f, double v, int prec)
{
    if (isnan(v) || isinf(v))
        fputs("null", f);
    else
        fprintf(f, "%.*f", prec, v);
}

/* The report file. A regular file (or a missing one) is written under a
 * temporary name in its directory and renamed over it only once complete,
 * so that a run that fails or is interrupted leaves the previous report
 * whole and no empty file; a symbolic link leads to its target, which is
 * replaced the same way; a character device or FIFO (/dev/stdout, a pipe)
 * is written directly. Anything else is refused before the run starts. */
static char json_dest[PATH_MAX]; /* the file replaced; empty: written directly */
static char json_dir[PATH_MAX];  /* its directory, where the temporary file goes */
static char json_tmp[PATH_MAX + 20];
static mode_t json_mode;

static void json_remove_tmp(void)
{
    if (json_tmp[0])
        unlink(json_tmp);
}

void json_check(const char *path)
{
    struct stat st;
    if (stat(path, &st) == 0) {
        if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode))
            return; /* written directly */
        if (!S_ISREG(st.st_mode))
            die("--json %s: not a regular file, character device or FIFO", path);
        if (!realpath(path, json_dest))
            die("--json %s: %s", path, strerror(errno));
        json_mode = st.st_mode & 07777;
    } else if (errno == ENOENT) {
        struct stat lst;
        if (lstat(path, &lst) == 0)
            die("--json %s: a symbolic link to nothing", path);
        if (strlen(path) >= sizeof json_dest)
            die("--json %s: name too long", path);
        strcpy(json_dest, path);
        mode_t um = umask(0);
        umask(um);
        json_mode = 0666 & ~um;
    } else {
        die("--json %s: %s", path, strerror(errno));
    }
    /* the directory must take the temporary file: found now, not after
     * the run */
    char d[PATH_MAX];
    strcpy(d, json_dest);
    strcpy(json_dir, dirname(d));
    if (access(json_dir, W_OK | X_OK) != 0)
        die("--json %s: cannot write in %s: %s", path, json_dir, strerror(errno));
}

static FILE *json_open(const char *path)
{
    if (!json_dest[0]) {
        /* json_check found a character device or FIFO, before a run of
         * minutes: opened without O_CREAT or O_TRUNC, and refused if the
         * name holds anything else by now (fopen "w" truncated a regular
         * file found there, with no temporary file and no rename). */
        struct stat st;
        int fd = open(path, O_WRONLY | O_NOCTTY | O_CLOEXEC);
        if (fd < 0)
            die("cannot write %s: %s", path, strerror(errno));
        if (fstat(fd, &st) != 0 || !(S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)))
            die("--json %s: no longer a character device or FIFO; not writing to it", path);
        FILE *f = fdopen(fd, "w");
        if (!f)
            die("cannot write %s: %s", path, strerror(errno));
        return f;
    }
    /* a fixed-length name, so that a report name of the system's longest
     * still works */
    snprintf(json_tmp, sizeof json_tmp, "%s/.kuai-tmp-XXXXXX", json_dir);
    int fd = mkstemp(json_tmp);
    if (fd < 0) {
        json_tmp[0] = 0;
        die("cannot write %s: %s", path, strerror(errno));
    }
    atexit(json_remove_tmp);
    FILE *f = fdopen(fd, "w");
    if (!f)
        die("cannot write %s: %s", path, strerror(errno));
    return f;
}

static void json_close(FILE *f, const char *path)
{
    int err = fflush(f) != 0 || ferror(f);
    if (!err && json_dest[0])
        err = fchmod(fileno(f), json_mode) != 0 || fsync(fileno(f)) != 0;
    int saved = errno;
    if (fclose(f) != 0 && !err) {
        err = 1;
        saved = errno;
    }
    if (err)
        die("error writing %s: %s", path, strerror(saved));
    if (json_dest[0]) {
        if (rename(json_tmp, json_dest) != 0)
            die("cannot replace %s: %s", path, strerror(errno));
        json_tmp[0] = 0;
    }
}

void write_json(const char *path)
{
    FILE *f = kuai_bench_report ? kuai_bench_report->open(path) : json_open(path);
    fputs("[\n", f);
    for (size_t i = 0; i < nrows; i++) {
        const row *r = &rows[i];
        fputs("  {\"cipher\": ", f);
        json_str(f, r->cipher);
        fputs(", \"mode\": ", f);
        json_str(f, r->mode);
        fputs(", \"backend\": ", f);
        json_str(f, r->backend);
        fprintf(f, ", \"size\": %zu, \"threads\": %d, \"mbps\": ", r->bytes, r->threads);
        json_num(f, r->mbps, 2);
        fputs(", \"cpb\": ", f);
        json_num(f, r->cpb, 3);
        fputs(", \"ns_per_call\": ", f);
        json_num(f, r->ns_call, 1);
        fputs(", \"peer\": ", f);
        if (r->peer[0])
            json_str(f, r->peer);
        else
            fputs("null", f);
        fputs(", \"peer_mbps\": ", f);
        json_num(f, r->peer_mbps, 2);
        fputs(", \"ratio\": ", f);
        json_num(f, r->ratio, 4);
        fputs(i + 1 < nrows ? "},\n" : "}\n", f);
    }
    fputs("]\n", f);
    if (kuai_bench_report)
        kuai_bench_report->commit(f, path);
    else
        json_close(f, path);
}
