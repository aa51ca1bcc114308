/* SPDX-License-Identifier: Apache-2.0 */
/* The kuai command-line tool: shared declarations. */
#ifndef KUAI_CLI_H
#define KUAI_CLI_H

#include "kuai.h"
#include "kuai_file.h"

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

/* Exit codes (documented in docs/cli.md and kuai.1). */
enum {
    EXIT_OK = 0,
    EXIT_USAGE = 1,    /* bad option, cipher name, hex key or IV, key length */
    EXIT_IO = 2,       /* cannot open, read or write; output exists without --force */
    EXIT_VERIFY = 3,   /* input rejected: not a kuai file, wrong key/password, tampered,
                          truncated, bad padding, length not a multiple of the block */
    EXIT_SELFTEST = 4, /* a known-answer test failed */
    EXIT_UNAVAIL = 5,  /* cipher not available in this build or on this CPU */
    EXIT_INTERNAL = 70 /* unexpected library or OpenSSL failure, out of memory */
};

/* Container chunk: 1 MiB of plaintext, then a 16-byte tag (kuai_file.h). */
#define CHUNK_SIZE KUAI_FILE_CHUNK_SIZE
#define TAG_SIZE KUAI_FILE_TAG_SIZE
#define HEADER_SIZE KUAI_FILE_HEADER_SIZE
#define SCRYPT_LOG2N_DEFAULT KUAI_FILE_SCRYPT_LOG2N_DEFAULT
#define SCRYPT_LOG2N_MIN KUAI_FILE_SCRYPT_LOG2N_MIN
#define SCRYPT_LOG2N_MAX KUAI_FILE_SCRYPT_LOG2N_MAX

typedef enum { MODE_ECB = 1, MODE_CBC, MODE_CTR, MODE_CFB, MODE_OFB } raw_mode;
/* CTR, CFB and OFB: any length, never padded; a final partial block ends the
 * stream. */
static inline int raw_mode_is_stream(raw_mode m)
{
    return m == MODE_CTR || m == MODE_CFB || m == MODE_OFB;
}

/* Options of encrypt/decrypt, as parsed. */
typedef struct cli_opts {
    int decrypt;
    const char *cipher_arg;
    kuai_cipher cipher; /* 0 when not given */
    raw_mode mode;      /* --raw only */
    const char *key_hex, *key_file, *iv_hex, *out;
    int password, force, quiet, raw, nopad;
    int scrypt_log2n;
    unsigned threads;
    const char **inputs;
    size_t ninputs;
} cli_opts;

/* Keys as given: raw bytes (one per input with a multi-line key file, else
 * one), or a password. Both are tracked secrets (secret_track) from
 * load_keys or read_password until free_keys. */
typedef struct key_material {
    uint8_t (*keys)[32];
    size_t nkeys, key_len;
    size_t keys_cap; /* 32-byte slots allocated at keys */
    char *password;
    size_t password_len;
} key_material;

/* util.c */
extern const char *cli_cmd; /* "encrypt", "decrypt", ... for messages */
void msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Every exit on an error: fail says why (one message) and calls cli_exit,
 * which wipes the tracked secrets, removes the temporary files and exits
 * with code. */
_Noreturn void fail(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
_Noreturn void cli_exit(int code);

/* Secrets held across calls that can fail() (raw keys, the password, the
 * container's derived file keys, key schedules): fail() ends the process
 * without returning to the code that would wipe them, so each is tracked
 * here while it lives and cli_exit wipes every tracked region
 * (OPENSSL_cleanse) before it exits. A signal that ends the process
 * (SIGINT, SIGTERM, ...; tracking installs the handler) wipes them too,
 * with plain volatile stores, except the shared ones: those other threads
 * read while the process writes output (the file keys during the chunk
 * pipeline), which a wipe under a worker could turn into a chunk sealed
 * with a zeroed key reaching the output before the process ends. fail()
 * is never called while such threads work (only while they wait, before
 * the first chunk), so it wipes shared regions too.
 * Main thread only. Wipe, then untrack (a signal in between wipes it
 * again, harmlessly), then free or leave the scope: a stale entry would
 * be written to after its free. A full table is an internal error (the
 * region is wiped, exit 70). */
void secret_track(void *p, size_t n);
void secret_track_shared(void *p, size_t n);
void secret_untrack(const void *p);
/* At startup: each of descriptors 0, 1 and 2 that is closed gets /dev/null
 * and its cli_std_closed flag, so no file kuai opens takes its place;
 * reading or writing through it is then refused. */
extern int cli_std_closed[3];
void cli_std_fds(void);
/* path names one of those closed descriptors (/dev/stdin, /dev/fd/0,
 * /proc/self/fd/1, ...): opening it would reach /dev/null. */
int cli_names_closed_std(const char *path);
/* What --help, --version, info, selftest and speed end with: rc, or
 * EXIT_IO with a message when standard output was closed at the start or
 * a write to it failed (a full disk, /dev/full), so that `kuai info > f`
 * on a full disk does not exit 0 with f incomplete. */
int cli_stdout_end(int rc);
/* At startup: no core dump (it would hold keys, passwords, plaintext). */
void cli_no_core_dumps(void);
void *xmalloc(size_t n);
int hex_decode(const char *hex, uint8_t *out, size_t max, size_t *len);
int parse_cipher(const char *name, kuai_cipher *c);
void print_cipher_names(FILE *f);
int load_keys(const cli_opts *o, key_material *km, size_t want_len);
void free_keys(key_material *km);
int read_password(int confirm, key_material *km);
ssize_t read_full(int fd, uint8_t *buf, size_t n);
int write_full(int fd, const uint8_t *buf, size_t n);
unsigned default_threads(void);

/* Output files: a regular file (new, or replacing one with --force) is
 * written under a temporary name in the target's directory and moved into
 * place only by output_commit; a character device or FIFO is written
 * directly, like standard output. A symlink leads to its target. */
typedef struct output {
    int fd;
    const char *path; /* as given, for messages; NULL for standard output */
    char *target;     /* the file to replace or create (a symlink resolved) */
    char *tmp;        /* temporary path while writing (for messages) */
    /* The target's directory, held open from output_create on: the
     * temporary file is made, moved into place and removed through it by
     * name (tmp_name, base), so that a directory moved or replaced by a
     * symbolic link meanwhile cannot send those elsewhere. */
    int dir;
    dev_t dir_dev;
    ino_t dir_ino;
    char *tmp_name;   /* tmp's last component */
    const char *base; /* target's last component */
    int force;
    int direct;     /* device or FIFO: written in place, nothing to commit */
    int replace;    /* an existing regular file is replaced: keep its mode */
    mode_t mode;    /* a replaced file's permissions; a device or FIFO's type */
    mode_t in_mode; /* a new file: its input's permissions (output_like_input), else 0666 */
    uid_t uid;
    gid_t gid;
    dev_t dev; /* the file replaced or written directly, as first found */
    ino_t ino;
} output;
int output_check(const char *path, int force);
/* Names the output and opens a device or FIFO; a regular file's temporary
 * file is made only by output_create, so that what runs in between (a
 * password read, seconds of scrypt) leaves nothing behind however it ends,
 * SIGKILL included. */
int output_open(output *o, const char *path, int force);
/* output_open without opening a device or FIFO: output_create opens it
 * (and refuses it if the name holds another file by then). What the name
 * is, and so how it is written, is fixed here, for a run that writes its
 * output long after (kuai speed --json). */
int output_prepare(output *o, const char *path, int force);
int output_create(output *o);
/* A new output made from the input fd gets at most the input's read and
 * write permissions (as cp), minus the umask: never wider than its input (a
 * regular file or a named FIFO; a pipe, terminal or socket gives 0666). */
void output_like_input(output *o, int fd);
/* pthread_create with every signal blocked in the new thread. */
int cli_thread_start(pthread_t *t, void *(*fn)(void *), void *arg);
int output_commit(output *o);
void output_abort(output *o);
/* Mode, owner, fsync and close: all that can fail before the rename. */
void output_finish(output *o);
/* rc 0: commits the n outputs (every one written and synced before the
 * first is moved into place); else removes them all. */
void output_end(output *os, size_t n, int rc);
/* The output's name in messages. */
static inline const char *out_name(const output *o)
{
    return o->path ? o->path : "standard output";
}

/* Progress bar on standard error (only when it is a terminal). */
typedef struct progress {
    int on;
    uint64_t total, done; /* total 0: unknown */
    double t0, last;
} progress;
void progress_start(progress *p, int quiet, uint64_t total);
void progress_add(progress *p, uint64_t n);
void progress_end(progress *p);
double now_seconds(void);

/* container.c */
int container_encrypt(const cli_opts *o, const key_material *km, int in_fd, output *out,
                      progress *pg, const char *in_name);
int container_decrypt(const cli_opts *o, key_material *km, int in_fd, output *out, progress *pg,
                      const char *in_name);

/* raw.c */
int parse_raw_cipher(const char *name, kuai_cipher *c, raw_mode *m);
int raw_run(const cli_opts *o, const key_material *km, size_t key_index, int in_fd, output *out,
            progress *pg, const char *in_name);
int raw_cbc_encrypt_lockstep(const cli_opts *o, const key_material *km, const int *in_fds,
                             output *outs, size_t n, progress *pg);

/* selftest.c */
int cmd_selftest(int argc, char **argv);
int cmd_info(int argc, char **argv);

/* Library error to exit code and message. */
int kuai_exit_code(int err);
/* kuai_strerror(err), and for KUAI_ERR_BACKEND from a key setup of cipher
 * c, that KUAI_BACKEND chose so and why (kuai_backend_env_refused). */
const char *cli_strerror(int err, kuai_cipher c);

#endif
