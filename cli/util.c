/* SPDX-License-Identifier: Apache-2.0 */
/* The kuai tool: messages, hex, keys, passwords, output files, progress. */
#define _GNU_SOURCE
#include "cli.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>
#ifdef __linux__
#include <linux/magic.h>
#include <sys/prctl.h>
#include <sys/vfs.h>
#endif

#include <openssl/crypto.h>

const char *cli_cmd = NULL;

/* Messages name files, and a name may hold any byte but '/' and NUL: its
 * control characters (an escape sequence that rewrites the terminal, a
 * newline that forges a second message) go out as \xHH, the rest as it
 * is (UTF-8 names stay readable). */
static void vmsg(const char *fmt, va_list ap)
{
    fflush(stdout);
    if (cli_cmd)
        fprintf(stderr, "kuai %s: ", cli_cmd);
    else
        fputs("kuai: ", stderr);
    char small[1024], *text = small;
    va_list again;
    va_copy(again, ap);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    if (n >= (int)sizeof small) {
        char *big = malloc((size_t)n + 1);
        if (big) {
            vsnprintf(big, (size_t)n + 1, fmt, again);
            text = big;
        }
    }
    va_end(again);
    for (const unsigned char *c = (const unsigned char *)text; n > 0 && *c; c++) {
        if (*c < 0x20 || *c == 0x7f)
            fprintf(stderr, "\\x%02x", *c);
        else
            fputc(*c, stderr);
    }
    if (text != small)
        free(text);
    fputc('\n', stderr);
}

void msg(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vmsg(fmt, ap);
    va_end(ap);
}

static void remove_temporaries(void);
static void wipe_secrets(void);

/* Every exit on an error goes through here (fail, and the usage texts),
 * so it is also where the secrets still held are wiped and the temporary
 * files being written removed: no error path can leave a temporary file
 * behind, or release a key or password unwiped. */
_Noreturn void cli_exit(int code)
{
    wipe_secrets();
    remove_temporaries();
    exit(code);
}

_Noreturn void fail(int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vmsg(fmt, ap);
    va_end(ap);
    cli_exit(code);
}

int cli_std_closed[3];

void cli_std_fds(void)
{
    for (int fd = 0; fd <= 2; fd++) {
        if (fcntl(fd, F_GETFD) != -1 || errno != EBADF)
            continue;
        /* the lowest free descriptor, so this one (those below are open):
         * a closed descriptor would otherwise be the next file opened, and
         * a temporary output read as standard input, or ciphertext written
         * over an input opened as standard output */
        int n = open("/dev/null", O_RDWR);
        if (n != fd)
            fail(EXIT_IO, "descriptor %d is closed and /dev/null cannot be opened", fd);
        cli_std_closed[fd] = 1;
    }
}

int cli_stdout_end(int rc)
{
    if (cli_std_closed[STDOUT_FILENO]) {
        msg("standard output: cannot write: it is closed");
        return rc ? rc : EXIT_IO;
    }
    if (fflush(stdout) != 0 || ferror(stdout)) {
        msg("standard output: write error: %s", strerror(errno ? errno : EIO));
        return rc ? rc : EXIT_IO;
    }
    return rc;
}

/* Under AddressSanitizer, whose leak check attaches to the process with
 * ptrace, which a process that is not dumpable refuses. */
#if defined(__SANITIZE_ADDRESS__)
#define CLI_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define CLI_ASAN 1
#endif
#endif

void cli_no_core_dumps(void)
{
    /* A core file would hold the key, the password and plaintext: no core
     * (a hard limit of 0, not raised again), and on Linux not dumpable at
     * all, which also covers a core_pattern pipe (ignoring the limit) and
     * keeps other processes of the user from reading its memory. */
    struct rlimit none = {0, 0};
    setrlimit(RLIMIT_CORE, &none);
#if defined(__linux__) && !defined(CLI_ASAN)
    prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
#endif
}

void *xmalloc(size_t n)
{
    /* 64-byte alignment: the SIMD backends read whole cache lines. */
    void *p = NULL;
    if (posix_memalign(&p, 64, n ? n : 1))
        fail(EXIT_INTERNAL, "out of memory (%zu bytes)", n);
    return p;
}

int kuai_exit_code(int err)
{
    switch (err) {
    case KUAI_ERR_UNSUPPORTED:
    case KUAI_ERR_BACKEND:
        return EXIT_UNAVAIL;
    case KUAI_ERR_AUTH:
    case KUAI_ERR_FORMAT:
    case KUAI_ERR_TRUNCATED:
        return EXIT_VERIFY;
    case KUAI_ERR_IO:
        return EXIT_IO;
    case KUAI_ERR_KEY_LEN:
        return EXIT_USAGE;
    default:
        return EXIT_INTERNAL;
    }
}

const char *cli_strerror(int err, kuai_cipher c)
{
    /* With no backend named, only KUAI_BACKEND makes key setup fail so:
     * say so, and why when the library knows (a leaky backend's opt-in). */
    if (err != KUAI_ERR_BACKEND)
        return kuai_strerror(err);
    const char *leaky = kuai_backend_env_refused(c);
    static _Thread_local char buf[256];
    if (leaky)
        snprintf(buf, sizeof buf,
                 "%s (KUAI_BACKEND chose %s, which leaks through the cache and is taken only "
                 "with KUAI_ALLOW_LEAKY_BACKENDS=1)",
                 kuai_strerror(err), leaky);
    else
        snprintf(buf, sizeof buf, "%s (as KUAI_BACKEND chose; 'kuai info' lists the usable ones)",
                 kuai_strerror(err));
    return buf;
}

/* Whitespace anywhere is skipped (key files end in a newline, and keys are
 * often written in groups: "0011 2233 ..."); returns 0 on success, -1 for
 * a non-hex character or odd length, -2 when the value is longer than max
 * bytes. */
int hex_decode(const char *hex, uint8_t *out, size_t max, size_t *len)
{
    size_t n = 0;
    int hi = -1;
    while (isspace((unsigned char)*hex))
        hex++;
    if (hex[0] == '0' && (hex[1] == 'x' || hex[1] == 'X'))
        hex += 2;
    for (; *hex; hex++) {
        int v;
        char ch = *hex;
        if (isspace((unsigned char)ch))
            continue;
        if (ch >= '0' && ch <= '9')
            v = ch - '0';
        else if (ch >= 'a' && ch <= 'f')
            v = ch - 'a' + 10;
        else if (ch >= 'A' && ch <= 'F')
            v = ch - 'A' + 10;
        else
            return -1;
        if (hi < 0) {
            hi = v;
        } else {
            if (n == max)
                return -2;
            out[n++] = (uint8_t)(hi << 4 | v);
            hi = -1;
        }
    }
    if (hi >= 0)
        return -1;
    *len = n;
    return 0;
}

int parse_cipher(const char *name, kuai_cipher *c)
{
    kuai_cipher found = kuai_cipher_by_name(name); /* any ASCII case: SM4 = sm4 */
    if (!found)
        return -1;
    *c = found;
    return 0;
}

void print_cipher_names(FILE *f)
{
    kuai_cipher list[64];
    size_t n = kuai_ciphers(list, 64);
    for (size_t i = 0; i < n && i < 64; i++)
        fprintf(f, "%s%s", i ? ", " : "", kuai_cipher_name(list[i]));
}

/* want 0: the cipher is not known yet (container decryption, where the
 * header names it), but a key no cipher takes (an empty --key "", or a
 * length none has) is still a usage error, not the header's "wrong key"
 * (exit 3, meant for a key that fails authentication). */
static void check_key_len(size_t got, size_t want, const char *where)
{
    if (!want) {
        kuai_cipher list[64];
        size_t n = kuai_ciphers(list, 64), sizes[64], ns = 0;
        for (size_t i = 0; i < n && i < 64; i++) {
            size_t ks = kuai_key_size(list[i]), j = ns;
            if (ks == got)
                return;
            while (j > 0 && sizes[j - 1] > ks) /* kept sorted, each once */
                j--;
            if (j > 0 && sizes[j - 1] == ks)
                continue;
            memmove(sizes + j + 1, sizes + j, (ns - j) * sizeof *sizes);
            sizes[j] = ks;
            ns++;
        }
        char text[128] = "";
        for (size_t i = 0; i < ns; i++) {
            const char *sep = i == 0 ? "" : i + 1 < ns ? ", " : " or ";
            size_t l = strlen(text);
            snprintf(text + l, sizeof text - l, "%s%zu", sep, sizes[i]);
        }
        fail(EXIT_USAGE, "%s: the key is %zu bytes (%zu hex digits); a key is %s bytes", where, got,
             got * 2, text);
    }
    if (got != want)
        fail(EXIT_USAGE,
             "%s: the key is %zu bytes (%zu hex digits); the cipher needs %zu bytes "
             "(%zu hex digits)",
             where, got, got * 2, want, want * 2);
}

/* --key HEX, or --key-file F with one key per line (blank lines and lines
 * starting with '#' ignored), or --password. want_len 0: the length is not
 * known yet (container decryption: the header names the cipher): a key of a
 * length no cipher takes is refused now, one of another cipher's length by
 * container_decrypt. */
int load_keys(const cli_opts *o, key_material *km, size_t want_len)
{
    memset(km, 0, sizeof *km);
    int sources = !!o->key_hex + !!o->key_file + !!o->password;
    /* container decryption without a key option: the header says whether
     * to ask for a password (container_decrypt) */
    if (sources == 0 && o->decrypt && !o->raw)
        return 0;
    if (sources != 1)
        fail(EXIT_USAGE, sources ? "give only one of --key, --key-file and --password"
                                 : "no key: give --key HEX, --key-file FILE or --password");
    if (o->password)
        return read_password(!o->decrypt, km);
    if (o->key_hex) {
        size_t n;
        km->keys = xmalloc(32);
        km->keys_cap = 1;
        secret_track(km->keys, 32);
        km->nkeys = 1;
        int rc = hex_decode(o->key_hex, km->keys[0], 32, &n);
        if (rc == -2)
            fail(EXIT_USAGE, "--key: longer than any key (at most 64 hex digits)");
        if (rc)
            fail(EXIT_USAGE, "--key: not a hex string (hex digits 0-9a-f, an even number of "
                             "them)");
        check_key_len(n, want_len, "--key");
        km->key_len = n;
        return 0;
    }
    FILE *f = fopen(o->key_file, "r");
    if (!f)
        fail(EXIT_IO, "%s: cannot open key file: %s", o->key_file, strerror(errno));
    /* stdio's own buffer would hold the file's text, keys included, and
     * go back to the heap unwiped at fclose: it reads into this one */
    char fbuf[4096];
    secret_track(fbuf, sizeof fbuf);
    setvbuf(f, fbuf, _IOFBF, sizeof fbuf);
    /* Read a character at a time, keeping only a key line's non-blank
     * characters, at most a key's worth ("0x" and 64 digits): a comment line
     * of any length is skipped, while memory stays bounded whatever the file
     * is (/dev/zero, a huge binary file); a NUL byte is binary data, not a
     * line end. */
    enum { LINE_START, LINE_KEY, LINE_COMMENT } state = LINE_START;
    char kl[80]; /* the key line's digits: a secret too, until decoded */
    size_t kn = 0, lineno = 1;
    secret_track(kl, sizeof kl);
    for (;;) {
        int ch = getc(f);
        if (ch == EOF || ch == '\n') {
            if (state == LINE_KEY) {
                kl[kn] = '\0';
                if (km->nkeys == km->keys_cap) {
                    size_t cap = km->keys_cap ? km->keys_cap * 2 : 4;
                    uint8_t(*nk)[32] = xmalloc(cap * 32);
                    secret_track(nk, cap * 32);
                    if (km->keys) {
                        memcpy(nk, km->keys, km->nkeys * 32);
                        OPENSSL_cleanse(km->keys, km->keys_cap * 32);
                        secret_untrack(km->keys);
                        free(km->keys);
                    }
                    km->keys = nk;
                    km->keys_cap = cap;
                }
                size_t n;
                int rc = hex_decode(kl, km->keys[km->nkeys], 32, &n);
                OPENSSL_cleanse(kl, sizeof kl);
                if (rc) {
                    fclose(f);
                    fail(EXIT_USAGE, "%s, line %zu: not a hex key of at most 64 digits",
                         o->key_file, lineno);
                }
                if (km->nkeys && n != km->key_len) {
                    fclose(f);
                    fail(EXIT_USAGE, "%s, line %zu: keys of different lengths", o->key_file,
                         lineno);
                }
                km->key_len = n;
                km->nkeys++;
            }
            if (ch == EOF)
                break;
            state = LINE_START;
            kn = 0;
            lineno++;
            continue;
        }
        if (state == LINE_COMMENT)
            continue;
        if (ch == '\0') {
            OPENSSL_cleanse(kl, sizeof kl);
            fclose(f);
            fail(EXIT_USAGE, "%s, line %zu: a NUL byte; a key file holds the key in hex (text)",
                 o->key_file, lineno);
        }
        if (isspace(ch))
            continue;
        if (state == LINE_START && ch == '#') {
            state = LINE_COMMENT;
            continue;
        }
        state = LINE_KEY;
        if (kn + 1 >= sizeof kl) {
            OPENSSL_cleanse(kl, sizeof kl);
            fclose(f);
            fail(EXIT_USAGE, "%s, line %zu: not a hex key of at most 64 digits", o->key_file,
                 lineno);
        }
        kl[kn++] = (char)ch;
    }
    int err = ferror(f) ? errno : 0;
    fclose(f);
    OPENSSL_cleanse(kl, sizeof kl);
    secret_untrack(kl);
    OPENSSL_cleanse(fbuf, sizeof fbuf);
    secret_untrack(fbuf);
    if (err)
        fail(EXIT_IO, "%s: read error: %s", o->key_file, strerror(err));
    if (!km->nkeys)
        fail(EXIT_USAGE, "%s: no key in the file (expected hex digits)", o->key_file);
    check_key_len(km->key_len, want_len, o->key_file);
    return 0;
}

void free_keys(key_material *km)
{
    if (km->keys) {
        OPENSSL_cleanse(km->keys, km->keys_cap * 32);
        secret_untrack(km->keys);
        free(km->keys);
    }
    if (km->password) {
        OPENSSL_cleanse(km->password, km->password_len);
        secret_untrack(km->password);
        free(km->password);
    }
    memset(km, 0, sizeof *km);
}

/* Every signal whose default action ends the process, but the crashes
 * (SIGSEGV, SIGBUS, SIGABRT, ... keep their core dump): the temporary
 * files are removed and the secrets wiped (catch_signals, on_signal) and
 * the terminal's echo given back at a prompt (tty_guard) when one of these
 * ends the process. */
#define ENDING_SIGNALS                                                                             \
    SIGINT, SIGTERM, SIGHUP, SIGPIPE, SIGQUIT, SIGALRM, SIGUSR1, SIGUSR2, SIGVTALRM, SIGPROF,      \
        SIGXCPU

/* While a prompt has the echo off: the terminal, its settings and the
 * prompt's, given back by tty_on_signal when a signal ends the process
 * there (Ctrl-C at the prompt would otherwise leave the shell without
 * echo), and by tty_on_stop while a stop signal holds it. */
static volatile sig_atomic_t tty_fd = -1;
static struct termios tty_saved, tty_quiet;
static const char *volatile tty_prompt;
static const int tty_sigs[] = {ENDING_SIGNALS, SIGTSTP, SIGTTIN, SIGTTOU};
#define N_TTY_SIGS (sizeof tty_sigs / sizeof tty_sigs[0])
static struct sigaction tty_prev[N_TTY_SIGS];
static int tty_caught[N_TTY_SIGS];

/* Restores the terminal, then lets the signal do what it did before the
 * prompt (remove the temporary files and end the process, on_signal, or
 * end it): the signal is blocked in here, so raise takes effect on return. */
static void tty_on_signal(int sig)
{
    int fd = tty_fd;
    if (fd >= 0)
        tcsetattr(fd, TCSAFLUSH, &tty_saved);
    for (size_t i = 0; i < N_TTY_SIGS; i++)
        if (tty_sigs[i] == sig)
            sigaction(sig, &tty_prev[i], NULL);
    raise(sig);
}

/* Ctrl-Z at the prompt (or a read or write from the background): the
 * terminal gets its settings back while the process is stopped, as
 * OpenSSH's readpassphrase does, or the shell would show what is typed
 * there, and the password typed after fg; once continued, the echo goes off
 * again, the prompt is repeated and tty_line reads on (its read ends with
 * EINTR: no SA_RESTART). All here is async-signal-safe. */
static void tty_on_stop(int sig)
{
    int e = errno, fd = tty_fd;
    struct sigaction dfl, mine;
    sigset_t set;
    if (fd >= 0)
        tcsetattr(fd, TCSAFLUSH, &tty_saved);
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigaction(sig, &dfl, &mine);
    sigemptyset(&set);
    sigaddset(&set, sig);
    raise(sig);                               /* pending: blocked in its own handler */
    pthread_sigmask(SIG_UNBLOCK, &set, NULL); /* the default action: stopped here */
    pthread_sigmask(SIG_BLOCK, &set, NULL);   /* continued */
    sigaction(sig, &mine, NULL);
    if (fd >= 0) {
        tcsetattr(fd, TCSAFLUSH, &tty_quiet);
        const char *p = tty_prompt;
        if (p && write(fd, p, strlen(p)) < 0) {
            /* the prompt is a courtesy */
        }
    }
    errno = e;
}

static void tty_guard(int fd, const struct termios *saved, const struct termios *quiet,
                      const char *prompt)
{
    tty_saved = *saved;
    tty_quiet = *quiet;
    tty_prompt = prompt;
    tty_fd = fd;
    for (size_t i = 0; i < N_TTY_SIGS; i++) {
        struct sigaction sa;
        int stop = tty_sigs[i] == SIGTSTP || tty_sigs[i] == SIGTTIN || tty_sigs[i] == SIGTTOU;
        tty_caught[i] = 0;
        if (sigaction(tty_sigs[i], NULL, &tty_prev[i]) != 0 || tty_prev[i].sa_handler == SIG_IGN)
            continue; /* an ignored signal stays ignored */
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = stop ? tty_on_stop : tty_on_signal;
        tty_caught[i] = sigaction(tty_sigs[i], &sa, NULL) == 0;
    }
}

static void tty_unguard(void)
{
    for (size_t i = 0; i < N_TTY_SIGS; i++)
        if (tty_caught[i])
            sigaction(tty_sigs[i], &tty_prev[i], NULL);
    tty_fd = -1;
}

/* The longest password typed at the terminal: a longer one is refused
 * rather than cut (cut, it would not match the same password in
 * KUAI_PASSWORD). The terminal's own line buffer (4095 bytes on Linux)
 * drops what goes past it without a word, so the terminal needs a limit
 * below that; KUAI_PASSWORD has none, so that no file encrypted with a
 * longer one there becomes one that cannot be opened. */
#define PASSWORD_MAX 1024

/* One line from the terminal with echo off; NULL when it is longer than
 * PASSWORD_MAX (read to its end all the same, so nothing of it is left for
 * the shell). */
static char *tty_line(int fd, const char *prompt)
{
    struct termios old, quiet;
    /* tracked (and so the signal handlers installed) before tty_guard
     * saves the handlers it gives back */
    char *buf = xmalloc(PASSWORD_MAX + 1);
    secret_track(buf, PASSWORD_MAX + 1);
    int have = tcgetattr(fd, &old) == 0;
    if (have) {
        quiet = old;
        quiet.c_lflag &= ~(tcflag_t)(ECHO | ECHONL);
        quiet.c_lflag |= ICANON;
        tty_guard(fd, &old, &quiet, prompt); /* before the echo goes off */
        tcsetattr(fd, TCSAFLUSH, &quiet);
    }
    if (write(fd, prompt, strlen(prompt)) < 0) {
        /* the prompt is a courtesy; reading still works */
    }
    size_t n = 0;
    int too_long = 0;
    for (;;) {
        char ch;
        ssize_t r = read(fd, &ch, 1);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0 || ch == '\n' || ch == '\r')
            break;
        if (n < PASSWORD_MAX)
            buf[n++] = ch;
        else
            too_long = 1;
    }
    buf[n] = '\0';
    if (have) {
        tcsetattr(fd, TCSAFLUSH, &old);
        tty_unguard();
    }
    if (write(fd, "\n", 1) < 0) {
        /* as above */
    }
    if (too_long) {
        OPENSSL_cleanse(buf, n);
        secret_untrack(buf);
        free(buf);
        return NULL;
    }
    return buf; /* tracked */
}

static _Noreturn void password_too_long(void)
{
    fail(EXIT_USAGE,
         "--password: longer than %d bytes at the terminal (KUAI_PASSWORD takes any length)",
         PASSWORD_MAX);
}

/* The terminal when there is one (the controlling terminal, so it works
 * with both standard streams redirected), else $KUAI_PASSWORD. */
int read_password(int confirm, key_material *km)
{
    int fd = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC);
    char *pw;
    if (fd >= 0) {
        pw = tty_line(fd, "Password: ");
        if (!pw)
            password_too_long();
        if (confirm) {
            char *again = tty_line(fd, "Password (again): ");
            if (!again) {
                OPENSSL_cleanse(pw, strlen(pw));
                password_too_long();
            }
            int same = !strcmp(pw, again);
            OPENSSL_cleanse(again, strlen(again));
            secret_untrack(again);
            free(again);
            if (!same) {
                close(fd);
                fail(EXIT_USAGE, "the passwords do not match");
            }
        }
        close(fd);
    } else {
        const char *env = getenv("KUAI_PASSWORD");
        if (!env)
            fail(EXIT_USAGE, "--password: no terminal to ask on, and KUAI_PASSWORD is not set");
        pw = strdup(env);
        if (!pw)
            fail(EXIT_INTERNAL, "out of memory");
        secret_track(pw, strlen(pw) + 1);
    }
    if (!*pw)
        fail(EXIT_USAGE, "--password: empty password");
    km->password = pw;
    km->password_len = strlen(pw);
    return 0;
}

ssize_t read_full(int fd, uint8_t *buf, size_t n)
{
    size_t got = 0;
    while (got < n) {
        ssize_t r = read(fd, buf + got, n - got);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        if (r == 0)
            break;
        got += (size_t)r;
    }
    return (ssize_t)got;
}

int write_full(int fd, const uint8_t *buf, size_t n)
{
    while (n) {
        ssize_t r = write(fd, buf, n);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        buf += r;
        n -= (size_t)r;
    }
    return 0;
}

unsigned default_threads(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : n > 64 ? 64 : (unsigned)n;
}

/* ---- output files ---- */

/* The temporary files being written (several at once in lockstep CBC),
 * removed if a signal ends the process: the handler only reads this table
 * and calls unlinkat, which is async-signal-safe. Each file is named in a
 * directory held open (dir), not by its path: a directory moved away or
 * replaced by a symbolic link during the run would otherwise send the
 * removal elsewhere and leave the file (0600, a decryption's plaintext) in
 * the old directory. Outputs in one directory share one handle (dev, ino),
 * so lockstep CBC's many outputs do not use twice the descriptors. An
 * entry is published by its name, written after the rest and cleared
 * first, so the handler never reads a half-made entry. */
#define MAX_TMP 65536
static struct {
    volatile int dir;
    dev_t dev;
    ino_t ino;
    const char *path;          /* the whole path, for messages */
    const char *volatile name; /* its last component, in dir */
} tmp_files[MAX_TMP];
/* How many entries have ever been used: the scans below stop there, not at
 * MAX_TMP (several per output, so thousands of outputs would otherwise
 * cost a scan of the whole table each). Only grows. */
static volatile size_t tmp_top;
/* Directory handles held for temporary files (output_dir_open), and how
 * many may be: half the open-file limit, so that the inputs still open. */
static size_t dir_handles;

static int tmp_track(const output *o)
{
    for (size_t i = 0; i < MAX_TMP; i++)
        if (!tmp_files[i].name) {
            if (i >= tmp_top)
                tmp_top = i + 1; /* before the entry is published */
            tmp_files[i].dir = o->dir;
            tmp_files[i].dev = o->dir_dev;
            tmp_files[i].ino = o->dir_ino;
            tmp_files[i].path = o->tmp;
            tmp_files[i].name = o->tmp_name;
            return 0;
        }
    return -1;
}

static void tmp_untrack(const output *o)
{
    for (size_t i = 0; i < tmp_top; i++)
        if (tmp_files[i].name == o->tmp_name && o->tmp_name)
            tmp_files[i].name = NULL;
}

/* A directory handle a tracked temporary file already uses for this
 * directory, or -1. */
static int tmp_dir_shared(dev_t dev, ino_t ino)
{
    for (size_t i = 0; i < tmp_top; i++)
        if (tmp_files[i].name && tmp_files[i].dir >= 0 && tmp_files[i].dev == dev &&
            tmp_files[i].ino == ino)
            return tmp_files[i].dir;
    return -1;
}

/* Closes the output's directory handle unless a tracked temporary file
 * still uses it. */
static void output_dir_release(output *o)
{
    if (o->dir < 0) { /* none, or AT_FDCWD */
        o->dir = -1;
        return;
    }
    int used = 0;
    for (size_t i = 0; i < tmp_top && !used; i++)
        used = tmp_files[i].name && tmp_files[i].dir == o->dir;
    if (!used) {
        close(o->dir);
        dir_handles--;
    }
    o->dir = -1;
}

/* unlinkat, saying so when the file stays (the user has to remove it). */
static void remove_tmp(int dir, const char *name, const char *path)
{
    if (unlinkat(dir, name, 0) != 0 && errno != ENOENT)
        msg("cannot remove the temporary file %s: %s", path, strerror(errno));
}

static void remove_temporaries(void)
{
    for (size_t i = 0; i < tmp_top; i++)
        if (tmp_files[i].name) {
            remove_tmp(tmp_files[i].dir, tmp_files[i].name, tmp_files[i].path);
            tmp_files[i].name = NULL;
        }
}

/* ---- secrets ---- */

/* What holds a secret across calls that can end the process (secret_track
 * in cli.h): a fixed table, so that nothing is allocated on the way out.
 * Only the main thread tracks and untracks (the others block the signals
 * on_signal catches: cli_thread_start, and the library's own threads), and
 * an entry is published by its pointer, written after its size and
 * cleared first, so the handler never reads a half-made entry. */
#define MAX_SECRETS 32
static struct {
    void *volatile p;
    volatile size_t n;
    volatile sig_atomic_t shared;
} secrets[MAX_SECRETS];

/* At an exit through cli_exit: every region, shared ones too (no other
 * thread is at work on them when the main thread fails; see cli.h). */
static void wipe_secrets(void)
{
    for (size_t i = 0; i < MAX_SECRETS; i++) {
        void *p = secrets[i].p;
        if (p) {
            OPENSSL_cleanse(p, secrets[i].n);
            secrets[i].p = NULL;
        }
    }
}

/* In the signal handler: async-signal-safe stores only, and the shared
 * regions left alone (other threads may be sealing with them right now). */
static void wipe_secrets_on_signal(void)
{
    for (size_t i = 0; i < MAX_SECRETS; i++) {
        volatile unsigned char *p = secrets[i].p;
        if (p && !secrets[i].shared)
            for (size_t j = 0, n = secrets[i].n; j < n; j++)
                p[j] = 0;
    }
}

static void on_signal(int sig)
{
    for (size_t i = 0, top = tmp_top; i < top; i++) {
        const char *name = tmp_files[i].name;
        if (name)
            unlinkat(tmp_files[i].dir, name, 0);
    }
    wipe_secrets_on_signal();
    signal(sig, SIG_DFL);
    raise(sig);
}

static void catch_signals(void)
{
    static int done;
    if (done)
        return;
    done = 1;
    int sigs[] = {ENDING_SIGNALS};
    /* past a file size limit (ulimit -f), write fails with EFBIG: an I/O
     * error like a full disk, reported and cleaned up, rather than the
     * signal ending the process with the temporary file in place */
    signal(SIGXFSZ, SIG_IGN);
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
        struct sigaction sa;
        /* a signal the caller ignores (nohup, trap '' INT) stays ignored:
         * it cannot end the process, so there is nothing to clean up */
        if (sigaction(sigs[i], NULL, &sa) != 0 || sa.sa_handler == SIG_IGN)
            continue;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_signal;
        sigaction(sigs[i], &sa, NULL);
    }
}

static void track(void *p, size_t n, int shared)
{
    if (!p || !n)
        return;
    catch_signals(); /* a signal that ends the process wipes it too */
    for (size_t i = 0; i < MAX_SECRETS; i++)
        if (!secrets[i].p) {
            secrets[i].n = n;
            secrets[i].shared = shared;
            secrets[i].p = p;
            return;
        }
    OPENSSL_cleanse(p, n);
    fail(EXIT_INTERNAL, "internal error: more than %d secrets held at once", MAX_SECRETS);
}

void secret_track(void *p, size_t n)
{
    track(p, n, 0);
}

void secret_track_shared(void *p, size_t n)
{
    track(p, n, 1);
}

void secret_untrack(const void *p)
{
    for (size_t i = 0; i < MAX_SECRETS; i++)
        if (p && secrets[i].p == p)
            secrets[i].p = NULL;
}

int cli_thread_start(pthread_t *t, void *(*fn)(void *), void *arg)
{
    /* Signals are handled by the main thread only, so that masking it while
     * a temporary file is created is enough (see output_open). */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    int r = pthread_create(t, NULL, fn, arg);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return r;
}

/* What an output name is now, and how it will be written (docs/cli.md,
 * "Where the output goes"). */
typedef enum { OUT_NEW, OUT_REPLACE, OUT_DIRECT } out_kind;

/* The descriptor that path (/dev/stdout, /dev/stderr, /dev/stdin, /dev/fd/N,
 * /proc/self/fd/N) stands for, when kuai was started with it open; else -1.
 * Such an output is written through that descriptor: opening the name
 * would, for a regular file, open it anew at offset 0 without O_APPEND
 * (`-o /dev/stdout >> log` overwrote the log's start) and call for
 * --force, which then replaced the file. */
/* The descriptor number a name of one spells (the names above, and
 * /proc/thread-self/fd/N), whether or not it is open; else -1. */
static int fd_name_number(const char *path)
{
    static const char *const std_names[] = {"/dev/stdin", "/dev/stdout", "/dev/stderr"};
    static const char *const dirs[] = {"/dev/fd/", "/proc/self/fd/", "/proc/thread-self/fd/"};
    const char *num = NULL;
    long n = -1;
    for (int i = 0; i < 3; i++)
        if (!strcmp(path, std_names[i]))
            n = i;
    for (int i = 0; i < 3; i++)
        if (!strncmp(path, dirs[i], strlen(dirs[i])))
            num = path + strlen(dirs[i]);
    if (num) {
        char *end;
        errno = 0;
        n = isdigit((unsigned char)*num) ? strtol(num, &end, 10) : -1;
        if (n < 0 || errno || *end || n > INT_MAX)
            return -1;
    }
    return (int)n;
}

int cli_names_closed_std(const char *path)
{
    int n = fd_name_number(path);
    return n >= 0 && n <= 2 && cli_std_closed[n];
}

static int named_fd(const char *path)
{
    long n = fd_name_number(path);
    if (n < 0)
        return -1;
    int flags = fcntl((int)n, F_GETFD);
    /* Inherited, not close-on-exec: every file kuai opens itself is
     * O_CLOEXEC, so /dev/fd/3 never means kuai's own input file (which,
     * under --force, it would replace). */
    if (flags < 0 || (flags & FD_CLOEXEC))
        fail(EXIT_IO, "%s: not a descriptor kuai was started with", path);
    if (n <= 2 && cli_std_closed[n])
        fail(EXIT_IO, "%s: cannot write: it is closed", path);
    /* and the name leads there (not so in a chroot without /proc) */
    struct stat ps, fs;
    if (stat(path, &ps) != 0 || fstat((int)n, &fs) != 0 || ps.st_dev != fs.st_dev ||
        ps.st_ino != fs.st_ino || S_ISDIR(fs.st_mode) || S_ISBLK(fs.st_mode))
        return -1;
    return (int)n;
}

/* Classifies path; fails (exit 2) for what is never written. For a symlink,
 * *target receives the file it leads to (malloc'd), which is then replaced
 * or written instead of the link, as cp does. st gets the target's status
 * (OUT_REPLACE, OUT_DIRECT). */
static out_kind output_classify(const char *path, int force, char **target, struct stat *st)
{
    struct stat lst;
    *target = NULL;
    if (named_fd(path) >= 0)
        return OUT_DIRECT;
    if (lstat(path, &lst) != 0) {
        /* "missing/" names a directory: a file of that name cannot be
         * made, which showed only when the output was moved into place,
         * after the work */
        size_t len = strlen(path);
        if (errno == ENOENT && len && path[len - 1] == '/')
            fail(EXIT_IO, "%s: no such directory", path);
        if (errno == ENOENT)
            return OUT_NEW;
        fail(EXIT_IO, "%s: cannot write: %s", path, strerror(errno));
    }
    *st = lst;
    if (S_ISLNK(lst.st_mode)) {
        if (stat(path, st) != 0) {
            if (errno == ENOENT)
                fail(EXIT_IO, "%s: not writing through a dangling symbolic link", path);
            fail(EXIT_IO, "%s: cannot follow the symbolic link: %s", path, strerror(errno));
        }
        if (S_ISREG(st->st_mode)) {
            *target = realpath(path, NULL);
            if (!*target)
                fail(EXIT_IO, "%s: cannot resolve the symbolic link: %s", path, strerror(errno));
        }
    }
    if (S_ISDIR(st->st_mode))
        fail(EXIT_IO, "%s: is a directory", path);
    /* Writing to a character device or a FIFO replaces nothing: no --force
     * needed, and the node itself is never replaced. */
    if (S_ISCHR(st->st_mode) || S_ISFIFO(st->st_mode))
        return OUT_DIRECT;
    if (!force)
        fail(EXIT_IO, "%s: exists; not overwriting it (use --force)", path);
    if (S_ISBLK(st->st_mode))
        return OUT_DIRECT;
    if (!S_ISREG(st->st_mode))
        fail(EXIT_IO, "%s: not a regular file, device or FIFO; not writing to it", path);
    return OUT_REPLACE;
}

/* Creates dir/name, name ending in six X's that become random letters
 * and digits, as mkostemp does in a path: O_EXCL, mode 0600, close-on-exec.
 * The name is not a secret, only one nobody else picks. */
static int tmp_create(int dir, char *name)
{
    static const char set[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    static uint64_t counter;
    char *x = name + strlen(name) - 6;
    for (int tries = 0; tries < 1000; tries++) {
        uint64_t r;
        if (getrandom(&r, sizeof r, GRND_NONBLOCK) != (ssize_t)sizeof r) {
            struct timespec ts;
            clock_gettime(CLOCK_REALTIME, &ts);
            r = ((uint64_t)ts.tv_nsec << 20) ^ (uint64_t)ts.tv_sec ^ ((uint64_t)getpid() << 40);
        }
        r += ++counter * 0x9e3779b97f4a7c15u;
        for (int i = 0; i < 6; i++, r /= 62)
            x[i] = set[r % 62];
        int fd = openat(dir, name, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd >= 0 || errno != EEXIST)
            return fd;
    }
    errno = EEXIST;
    return -1;
}

int output_check(const char *path, int force)
{
    if (!path)
        return 0;
    char *target;
    struct stat st;
    out_kind kind = output_classify(path, force, &target, &st);
    if (kind != OUT_DIRECT) {
        /* The temporary file goes next to the target: a directory that is
         * missing or not writable is said now, before the password is asked
         * for or any input read, not when output_open makes that file. */
        char *d = strdup(target ? target : path);
        if (!d)
            fail(EXIT_INTERNAL, "out of memory");
        int e = faccessat(AT_FDCWD, dirname(d), W_OK | X_OK, 0) == 0 ? 0 : errno;
        free(d);
        if (e)
            fail(EXIT_IO, "%s: cannot create a temporary file next to it: %s", path, strerror(e));
    }
    free(target);
    return 0;
}

int output_prepare(output *o, const char *path, int force)
{
    memset(o, 0, sizeof *o);
    o->force = force;
    o->fd = -1;
    o->dir = -1;
    if (!path) {
        o->fd = STDOUT_FILENO;
        return 0;
    }
    o->path = path;
    char *target;
    struct stat st;
    out_kind kind = output_classify(path, force, &target, &st);
    if (kind == OUT_DIRECT) {
        o->direct = 1;
        o->dev = st.st_dev;
        o->ino = st.st_ino;
        o->mode = st.st_mode;
        return 0;
    }
    o->target = target ? target : strdup(path);
    if (!o->target)
        fail(EXIT_INTERNAL, "out of memory");
    o->replace = kind == OUT_REPLACE;
    o->in_mode = 0666;
    if (o->replace) {
        o->mode = st.st_mode & 07777;
        o->uid = st.st_uid;
        o->gid = st.st_gid;
        o->dev = st.st_dev;
        o->ino = st.st_ino;
    }
    return 0;
}

/* A device or FIFO output prepared: opened, and refused if the name holds
 * another file by now. */
static void output_open_direct(output *o)
{
    int fd = named_fd(o->path);
    o->fd =
        fd >= 0 ? fcntl(fd, F_DUPFD_CLOEXEC, 3) : open(o->path, O_WRONLY | O_NOCTTY | O_CLOEXEC);
    if (o->fd < 0)
        fail(EXIT_IO, "%s: cannot open for writing: %s", o->path, strerror(errno));
    /* The name was judged a device or FIFO, which is written in place;
     * if it has become something else since (renamed over, a link
     * changed), writing in place would overwrite a regular file's start
     * without --force and without the temporary file. */
    struct stat now;
    if (fd < 0 && (fstat(o->fd, &now) != 0 || now.st_dev != o->dev || now.st_ino != o->ino ||
                   (now.st_mode & S_IFMT) != (o->mode & S_IFMT)))
        fail(EXIT_IO, "%s: changed while it was being opened; not writing to it", o->path);
}

int output_open(output *o, const char *path, int force)
{
    output_prepare(o, path, force);
    if (o->direct)
        output_open_direct(o);
    return 0;
}

/* A handle on dir for an output's temporary file, with dir's status in
 * *ds: one a tracked temporary file already holds for it, else a new one
 * (O_PATH: a directory kuai may write in but not list, mode 0300, is still
 * one it can make its file in). With half the open-file limit already in
 * handles (thousands of outputs through links into as many directories),
 * AT_FDCWD: that output goes by its path, as before handles were held.
 * -1 with errno when dir cannot be reached. */
static int output_dir_open(const char *dir, struct stat *ds)
{
    if (stat(dir, ds) != 0)
        return -1;
    int shared = tmp_dir_shared(ds->st_dev, ds->st_ino);
    if (shared >= 0)
        return shared;
    struct rlimit nofile;
    if (getrlimit(RLIMIT_NOFILE, &nofile) == 0 && nofile.rlim_cur != RLIM_INFINITY &&
        dir_handles >= nofile.rlim_cur / 2)
        return AT_FDCWD;
    int dfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0)
        return errno == EMFILE || errno == ENFILE ? AT_FDCWD : -1;
    /* *ds from the handle itself (the path may lead elsewhere by now):
     * what output_recheck compares the path with at the end */
    if (fstat(dfd, ds) != 0) {
        int e = errno;
        close(dfd);
        errno = e;
        return -1;
    }
    dir_handles++;
    return dfd;
}

int output_create(output *o)
{
    if (!o->path || o->fd >= 0)
        return 0;
    if (o->direct) {
        output_open_direct(o);
        return 0;
    }
    /* The temporary name does not grow with the target's: a 255-byte name
     * still has a temporary name within NAME_MAX. */
    char *d = strdup(o->target);
    if (!d)
        fail(EXIT_INTERNAL, "out of memory");
    const char *dir = dirname(d);
    size_t n = strlen(dir) + 32;
    o->tmp = xmalloc(n);
    snprintf(o->tmp, n, "%s/.kuai-tmp-XXXXXX", dir);
    o->tmp_name = strrchr(o->tmp, '/') + 1;
    const char *slash = strrchr(o->target, '/');
    o->base = slash ? slash + 1 : o->target;
    struct stat ds;
    int dfd = output_dir_open(dir, &ds);
    int e = errno;
    free(d);
    if (dfd == -1) {
        free(o->tmp);
        o->tmp = NULL;
        fail(EXIT_IO, "%s: cannot create a temporary file next to it: %s", o->path, strerror(e));
    }
    if (dfd == AT_FDCWD) { /* no handle to spare: by path, as the names are */
        o->tmp_name = o->tmp;
        o->base = o->target;
    }
    o->dir = dfd;
    o->dir_dev = ds.st_dev;
    o->dir_ino = ds.st_ino;
    catch_signals();
    /* A signal between creating the file and tracking it would leave the
     * file behind; other threads started by the CLI block these signals
     * (cli_thread_start), so masking this thread closes the window. */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    /* O_EXCL and mode 0600, as mkostemp: nobody else can have the file
     * open, and a plaintext is never readable by others meanwhile. */
    o->fd = tmp_create(o->dir, o->tmp_name);
    e = errno;
    if (o->fd >= 0 && tmp_track(o)) {
        remove_tmp(o->dir, o->tmp_name, o->tmp);
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        fail(EXIT_USAGE, "%s: more than %d outputs at once", o->path, MAX_TMP);
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (o->fd < 0) {
        output_dir_release(o);
        free(o->tmp);
        o->tmp = NULL;
        o->tmp_name = NULL;
        fail(EXIT_IO, "%s: cannot create a temporary file next to it: %s", o->path, strerror(e));
    }
    return 0;
}

/* A named FIFO is a file whose permissions say who may write what comes
 * through it, as a regular file's say who may read it; an anonymous pipe
 * (on pipefs) says nothing, and gives 0666. */
static int named_fifo(int fd, const struct stat *st)
{
#ifdef __linux__
    struct statfs fs;
    return S_ISFIFO(st->st_mode) && fstatfs(fd, &fs) == 0 && fs.f_type != PIPEFS_MAGIC;
#else
    (void)fd;
    (void)st;
    return 0;
#endif
}

/* A device node's permissions say who may read it, as a regular file's
 * (cp copies them): a 0600 block device gives a 0600 output. A terminal's
 * say who may write to it, and it counts as a pipe. */
static int device_file(int fd, const struct stat *st)
{
    return S_ISBLK(st->st_mode) || (S_ISCHR(st->st_mode) && !isatty(fd));
}

void output_like_input(output *o, int fd)
{
    struct stat st;
    if (fstat(fd, &st) == 0 && (S_ISREG(st.st_mode) || named_fifo(fd, &st) || device_file(fd, &st)))
        o->in_mode = st.st_mode & 0666;
}

/* Moves the finished temporary file to the target without ever replacing
 * a file that appeared meanwhile: renameat2(RENAME_NOREPLACE), or where the
 * file system lacks it link + unlink. */
static int publish_new(const output *o)
{
    if (renameat2(o->dir, o->tmp_name, o->dir, o->base, RENAME_NOREPLACE) == 0)
        return 0;
    if (errno != EINVAL && errno != ENOSYS)
        return -1;
    if (linkat(o->dir, o->tmp_name, o->dir, o->base, 0) != 0)
        return -1;
    /* the file is in place under both names: drop the temporary one */
    remove_tmp(o->dir, o->tmp_name, o->tmp);
    return 0;
}

/* Everything that can fail before the rename: mode, owner, fsync, close. */
void output_finish(output *o)
{
    if (!o->path)
        return;
    if (!o->direct && !o->tmp)
        output_create(o); /* a run that wrote nothing still leaves its (empty) output */
    if (o->fd < 0)
        return;
    if (o->direct) {
        int r = close(o->fd);
        o->fd = -1;
        /* close on a device or FIFO can report a failed write */
        if (r != 0 && errno != EINTR)
            fail(EXIT_IO, "%s: cannot write: %s", o->path, strerror(errno));
        return;
    }
    int ok;
    if (o->replace) {
        /* Keep what the replaced file had: owner and group where allowed,
         * and never wider permissions. New content is not set-user-ID or
         * set-group-ID (as writing into the file would clear them); and a
         * group that cannot be kept does not pass its permissions on to
         * ours. */
        mode_t mode = o->mode & ~(mode_t)(S_ISUID | S_ISGID);
        if (fchown(o->fd, o->uid, o->gid) != 0 && fchown(o->fd, (uid_t)-1, o->gid) != 0)
            mode &= ~(mode_t)S_IRWXG; /* the file stays in our group */
        ok = fchmod(o->fd, mode) == 0;
    } else {
        /* 0600 while incomplete; a finished file gets what cp would give
         * it: its input's permissions (0666 for a pipe or terminal) minus
         * the umask (process-wide, and only this thread runs now). */
        mode_t mask = umask(077);
        umask(mask);
        ok = fchmod(o->fd, o->in_mode & ~mask) == 0;
    }
    if (!ok || fsync(o->fd) != 0 || close(o->fd) != 0) {
        int e = errno;
        o->fd = -1;
        output_abort(o);
        fail(EXIT_IO, "%s: cannot write: %s", o->path, strerror(e));
    }
    o->fd = -1;
}

/* Before any output is moved into place: a file to be replaced was a
 * regular file when the run started, but a run can take minutes, and rename
 * replaces whatever the name holds by then. A name that has become a
 * device, FIFO, socket or link meanwhile is refused (exit 2; cli_exit
 * removes every temporary file), as it would have been at the start; so is
 * another regular file put there, whose mode and owner are not the ones
 * output_finish gave the new file (a 0600 file would be replaced by a
 * wider one). Gone is fine: the output is then new. So is a directory that
 * the output's path no longer leads to (moved away, or replaced by a link
 * to another): the output would land where its name does not lead, so
 * nothing is written, and the temporary file is removed from the directory
 * it is in. */
static void output_recheck(const output *o)
{
    struct stat now;
    if (!o->path || o->direct || !o->tmp)
        return;
    char *d = strdup(o->target);
    if (!d)
        fail(EXIT_INTERNAL, "out of memory");
    int moved = stat(dirname(d), &now) != 0 || now.st_dev != o->dir_dev || now.st_ino != o->dir_ino;
    free(d);
    if (moved)
        fail(EXIT_IO, "%s: its directory was moved or replaced during the run; not writing there",
             o->path);
    if (!o->replace || fstatat(o->dir, o->base, &now, AT_SYMLINK_NOFOLLOW) != 0)
        return;
    if (!S_ISREG(now.st_mode))
        fail(EXIT_IO, "%s: no longer a regular file; not replacing it", o->path);
    if (now.st_dev != o->dev || now.st_ino != o->ino)
        fail(EXIT_IO, "%s: another file since the run started; not replacing it", o->path);
}

/* Moves the finished file into place. */
static void output_publish(output *o)
{
    if (!o->path || o->direct)
        return;
    if (o->force && o->replace) {
        if (renameat(o->dir, o->tmp_name, o->dir, o->base) != 0) {
            int e = errno;
            output_abort(o);
            fail(EXIT_IO, "%s: cannot rename the temporary file into place: %s", o->path,
                 strerror(e));
        }
    } else if (publish_new(o) != 0) {
        int e = errno;
        output_abort(o);
        if (e == EEXIST)
            fail(EXIT_IO, "%s: exists; not overwriting it (use --force)", o->path);
        fail(EXIT_IO, "%s: cannot create: %s", o->path, strerror(e));
    }
    tmp_untrack(o);
    /* the rename itself survives a crash (nothing to fail after the output
     * is in place but this best effort; an O_PATH handle cannot be synced) */
    char *d = o->dir == AT_FDCWD ? strdup(o->target) : NULL;
    int sync_fd = openat(o->dir, d ? dirname(d) : ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    free(d);
    if (sync_fd >= 0) {
        fsync(sync_fd);
        close(sync_fd);
    }
    output_dir_release(o);
    free(o->tmp);
    o->tmp = NULL;
    o->tmp_name = NULL;
    free(o->target);
    o->target = NULL;
}

int output_commit(output *o)
{
    output_finish(o);
    output_recheck(o);
    output_publish(o);
    return 0;
}

void output_end(output *os, size_t n, int rc)
{
    if (rc) {
        for (size_t i = 0; i < n; i++)
            output_abort(&os[i]);
        return;
    }
    for (size_t i = 0; i < n; i++)
        output_finish(&os[i]);
    for (size_t i = 0; i < n; i++)
        output_recheck(&os[i]);
    for (size_t i = 0; i < n; i++)
        output_publish(&os[i]);
}

void output_abort(output *o)
{
    if (!o->path)
        return;
    if (o->fd >= 0)
        close(o->fd);
    o->fd = -1;
    if (o->tmp) {
        /* before untracking: a signal in between still removes it */
        remove_tmp(o->dir, o->tmp_name, o->tmp);
        tmp_untrack(o);
        output_dir_release(o);
        free(o->tmp);
        o->tmp = NULL;
        o->tmp_name = NULL;
    }
    free(o->target);
    o->target = NULL;
}

/* ---- progress ---- */

double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void progress_start(progress *p, int quiet, uint64_t total)
{
    memset(p, 0, sizeof *p);
    p->on = !quiet && isatty(STDERR_FILENO);
    p->total = total;
    p->t0 = p->last = now_seconds();
}

/* Sizes and rates in one unit family: B, KiB, MiB, ... (rates per s). */
static void human(char *buf, size_t n, double v)
{
    const char *u[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    int i = 0;
    while (v >= 1024 && i < 4) {
        v /= 1024;
        i++;
    }
    snprintf(buf, n, i ? "%.1f %s" : "%.0f %s", v, u[i]);
}

static int term_cols(void)
{
    struct winsize ws;
    if (ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
        return ws.ws_col;
    return 80;
}

static void progress_draw(progress *p, double t, int final)
{
    char done[32], total[32], rate_s[32], text[160], line[400];
    double dt = t - p->t0;
    double rate = dt > 0 ? (double)p->done / dt : 0;
    human(done, sizeof done, (double)p->done);
    human(rate_s, sizeof rate_s, rate);
    /* The line never reaches the last column (no wrap), and \033[K clears
     * what a longer earlier line left. */
    int cols = term_cols() - 1;
    if (cols > (int)sizeof line - 16)
        cols = (int)sizeof line - 16;
    if (p->total) {
        human(total, sizeof total, (double)p->total);
        double frac = (double)p->done / (double)p->total;
        if (frac > 1)
            frac = 1;
        double eta =
            rate > 0 ? (double)(p->total - (p->done < p->total ? p->done : p->total)) / rate : 0;
        snprintf(text, sizeof text, "%3.0f%% %s / %s  %s/s  ETA %d:%02d", frac * 100, done, total,
                 rate_s, (int)eta / 60, (int)eta % 60);
        int width = cols - (int)strlen(text) - 3; /* "[", "] " */
        if (width > 30)
            width = 30;
        if (width >= 5) {
            char bar[31];
            int fill = (int)(frac * width);
            for (int i = 0; i < width; i++)
                bar[i] = i < fill ? '#' : '.';
            bar[width] = '\0';
            snprintf(line, sizeof line, "\r[%s] %s", bar, text);
        } else {
            snprintf(line, sizeof line, "\r%.*s", cols > 0 ? cols : 0, text);
        }
    } else {
        snprintf(text, sizeof text, "%s  %s/s", done, rate_s);
        snprintf(line, sizeof line, "\r%.*s", cols > 0 ? cols : 0, text);
    }
    fputs(line, stderr);
    fputs("\033[K", stderr);
    if (final)
        fputc('\n', stderr);
    fflush(stderr);
}

void progress_add(progress *p, uint64_t n)
{
    p->done += n;
    if (!p->on)
        return;
    double t = now_seconds();
    if (t - p->last >= 0.2) {
        p->last = t;
        progress_draw(p, t, 0);
    }
}

void progress_end(progress *p)
{
    if (p->on)
        progress_draw(p, now_seconds(), 1);
    p->on = 0;
}
