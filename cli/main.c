/* SPDX-License-Identifier: Apache-2.0 */
/* kuai: the command-line tool. Commands: encrypt, decrypt, speed, selftest,
 * info (docs/cli.md, kuai.1). */
#define _GNU_SOURCE
#include "bench.h"
#include "cli.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char usage_main[] =
    "usage: kuai COMMAND [OPTIONS] [ARGS]\n"
    "\n"
    "Fast, constant-time uBlock, SM4 and AES.\n"
    "\n"
    "commands:\n"
    "  encrypt    encrypt files or standard input (authenticated kuai container;\n"
    "             --raw: openssl-enc compatible bytes)\n"
    "  decrypt    decrypt and verify; an output file appears only once the whole\n"
    "             input has verified (standard output, a pipe or a device: each\n"
    "             1 MiB chunk once it has verified)\n"
    "  speed      benchmark the ciphers against OpenSSL (libgcrypt: kuai_bench)\n"
    "  selftest   run known-answer tests through every backend usable here\n"
    "  info       CPU features and the backend chosen for each cipher\n"
    "  help CMD   help on a command (same as kuai CMD --help)\n"
    "\n"
    "options: --version, --help\n"
    "exit codes: 0 ok, 1 usage, 2 I/O or output exists, 3 input rejected (tampered,\n"
    "truncated, wrong key or password, not a kuai file, bad padding), 4 self-test\n"
    "failure, 5 cipher not available here, 70 internal error.\n"
    "See kuai(1) and docs/cli.md.\n";

static const char usage_encrypt[] =
    "usage: kuai encrypt --cipher NAME (--key HEX | --key-file F | --password)\n"
    "                    [-o OUT] [-j N] [-f] [-q] [IN ...]\n"
    "       kuai encrypt --raw --cipher NAME-MODE (--key HEX | --key-file F) [--iv HEX]\n"
    "                    [--nopad] [-o OUT] [-j N] [-f] [-q] [IN ...]\n"
    "\n"
    "Encrypts each IN (standard input when none is given, or '-') to OUT (standard\n"
    "output when no -o). The output is a kuai container (docs/format.md): every\n"
    "1 MiB chunk sealed with GCM (uBlock-256/256: CTR + HMAC-SHA-256), chunk\n"
    "order, truncation and appending all detected on decryption.\n"
    "\n"
    "%s"
    "  -k, --key HEX       the key in hex (as many bytes as the cipher's key)\n"
    "      --key-file F    a file holding the key in hex; with --raw and several\n"
    "                      inputs, one key per line gives each input its own key\n"
    "  -p, --password      derive the key from a password with scrypt (OpenSSL\n"
    "                      libcrypto; N=2^17, r=8, p=1, random 16-byte salt in the\n"
    "                      header); asked on the terminal, or taken from\n"
    "                      $KUAI_PASSWORD when there is no terminal\n"
    "      --scrypt-log2n N  scrypt cost N=2^N (10..20, default 17); lower only for\n"
    "                      tests or slow machines\n"
    "  -o, --output OUT    output file; with several inputs a directory, where each\n"
    "                      IN becomes DIR/BASENAME.kuai (--raw: BASENAME.enc)\n"
    "  -j, --threads N     threads sealing chunks (default: all cores, here %u)\n"
    "  -f, --force         overwrite existing output files\n"
    "  -q, --quiet         no progress bar (it is shown only when stderr is a terminal)\n"
    "      --raw           no container: the bytes of openssl enc -K HEX -iv HEX\n"
    "      --iv HEX        the IV (CBC, CFB, OFB) or initial counter block (CTR),\n"
    "                      one block\n"
    "      --nopad         no PKCS#7 padding in ECB/CBC (openssl enc -nopad); CTR,\n"
    "                      CFB and OFB are never padded\n"
    "  -h, --help          this help\n"
    "\n"
    "With --raw, CBC and several inputs, the files are encrypted in lockstep\n"
    "through the multi-key call (kuai_cbc_encrypt_multi). Output files are\n"
    "written under a temporary name and renamed when complete.\n";

static const char usage_decrypt[] =
    "usage: kuai decrypt [--key HEX | --key-file F | --password] [-o OUT] [-j N]\n"
    "                    [-f] [-q] [IN ...]\n"
    "       kuai decrypt --raw --cipher NAME-MODE (--key HEX | --key-file F) [--iv HEX]\n"
    "                    [--nopad] [-o OUT] [-j N] [-f] [-q] [IN ...]\n"
    "\n"
    "Decrypts and verifies each IN (standard input when none, or '-') to OUT\n"
    "(standard output when no -o). The cipher and KDF settings come from the\n"
    "header. To a file: written under a temporary name next to OUT, renamed only\n"
    "once the whole input has verified; on any failure nothing is left. To\n"
    "standard output: each 1 MiB chunk is written only after it has verified; a\n"
    "later failure ends the output early with exit code 3.\n"
    "\n"
    "  -k, --key HEX       the key in hex\n"
    "      --key-file F    a file holding the key in hex\n"
    "  -p, --password      the password ($KUAI_PASSWORD when there is no terminal);\n"
    "                      with no key option it is asked for anyway when the\n"
    "                      file was encrypted with a password\n"
    "  -c, --cipher NAME   optional: fail unless the file uses this cipher;\n"
    "                      with --raw required, NAME-ecb/-cbc/-ctr/-cfb/-ofb\n"
    "  -o, --output OUT    output file; with several inputs a directory, where each\n"
    "                      IN.kuai (--raw: IN.enc) becomes DIR/IN (other names:\n"
    "                      DIR/IN.out)\n"
    "  -j, --threads N     threads opening chunks (default: all cores, here %u)\n"
    "  -f, --force         overwrite existing output files\n"
    "  -q, --quiet         no progress bar\n"
    "      --raw           openssl enc -d -K HEX -iv HEX compatible (NOT authenticated:\n"
    "                      only the padding is checked; a truncated CTR, CFB or OFB\n"
    "                      input decrypts to a truncated plaintext)\n"
    "      --iv HEX        the IV or initial counter block\n"
    "      --nopad         no PKCS#7 padding\n"
    "  -h, --help          this help\n";

static const char usage_speed[] =
    "usage: kuai speed [--cipher NAME] [--mode M] [--backend B] [--threads N]\n"
    "                  [--json FILE [-f]] [--quick] [--reps N] [--no-sweep]\n"
    "\n"
    "The library's benchmark (bench/bench.c, also built as kuai_bench): the uBlock\n"
    "paper's scenarios (long and short messages, single and multi-key), GCM, the\n"
    "SM4 study's ECB size ladder on 1 and N threads, with OpenSSL measured in the\n"
    "same run where it has the cipher, and the ratios (the libgcrypt rows are\n"
    "kuai_bench's alone: kuai does not link libgcrypt).\n"
    "--json output is what bench/plot.py draws.\n"
    "\n"
    "  --cipher NAME   only this cipher\n"
    "  --mode M        only rows whose mode starts with M (ecb, cbc, ctr, gcm,\n"
    "                  cbc-enc-mk, short, ecb-enc-sweep, ctr-parallel, paper:\n"
    "                  the uBlock paper's matrix, short/long, 1/4 keys, key\n"
    "                  setup, one-shot, crossovers)\n"
    "  --backend B     only this backend (ref, ssse3, avx2, aesni, gfni, ...)\n"
    "  --threads N     multi-threaded rows on 1 and N threads (default 2)\n"
    "  --json FILE     also write the rows as JSON (as encrypt's -o: an existing\n"
    "                  file is replaced only with --force)\n"
    "  -f, --force     replace FILE\n"
    "  --quick         short repetitions (a smoke test)\n"
    "  --reps N        repetitions per row (best reported; default 7)\n"
    "  --no-sweep      skip the ECB size ladder and ctr-parallel rows\n"
    "  --modes-ext     instead, as the only option: XTS, CCM, CFB and CMAC rows\n"
    "                  beside the same backend's ECB and OpenSSL (docs/modes.md)\n"
    "  -h, --help      this help\n"
    "Set OPENSSL_ia32cap=\"~0x200000200000000\" to hold kuai against OpenSSL's\n"
    "software AES (as make bench does).\n";

/* The --cipher option of usage_encrypt: kuai_ciphers()'s names, then this. */
static const char cipher_option_rest[] =
    "(any case); with --raw NAME-ecb, NAME-cbc, NAME-ctr, NAME-cfb or NAME-ofb (e.g. sm4-ctr, "
    "aes-256-cbc; CFB is CFB128; CFB and OFB not for ublock-256-256; no XTS: openssl enc has none)";

/* Appends n bytes of s to out (size bytes, *o used), if they fit. */
static void append(char *out, size_t size, size_t *o, const char *s, size_t n)
{
    if (*o + n < size) {
        memcpy(out + *o, s, n);
        *o += n;
        out[*o] = '\0';
    }
}

/* "  -c, --cipher NAME   " and the names and rest, filled greedily into
 * lines of at most 80 columns under the option texts' column (22). */
static const char *cipher_option_text(void)
{
    static char out[8192];
    char words[4096] = "";
    size_t w = 0, o = 0, col = 22;
    kuai_cipher list[64];
    size_t n = kuai_ciphers(list, 64);
    for (size_t i = 0; i < n && i < 64; i++) {
        const char *cn = kuai_cipher_name(list[i]);
        append(words, sizeof words, &w, cn, strlen(cn));
        append(words, sizeof words, &w, i + 1 < n ? ", " : " ", i + 1 < n ? 2 : 1);
    }
    append(words, sizeof words, &w, cipher_option_rest, strlen(cipher_option_rest));
    append(out, sizeof out, &o, "  -c, --cipher NAME   ", 22);
    for (const char *p = words; *p;) {
        size_t len = strcspn(p, " ");
        if (col > 22 && col + 1 + len > 80) {
            append(out, sizeof out, &o, "\n                      ", 23);
            col = 22;
        } else if (col > 22) {
            append(out, sizeof out, &o, " ", 1);
            col++;
        }
        append(out, sizeof out, &o, p, len);
        col += len;
        p += len + strspn(p + len, " ");
    }
    append(out, sizeof out, &o, "\n", 1);
    return out;
}

static void usage_exit(const char *text, int code)
{
    FILE *f = code ? stderr : stdout;
    if (text == usage_encrypt)
        fprintf(f, text, cipher_option_text(), default_threads());
    else
        fprintf(f, text, default_threads());
    /* as fail: nothing is held yet, but every exit takes one way */
    cli_exit(code ? code : cli_stdout_end(0));
}

/* --opt VALUE, --opt=VALUE or -o VALUE. Only the long form takes '=': the
 * short one (is_opt matched "-o" exactly) is shorter than name, so a[n]
 * would be read past its end, into the next argument. */
static const char *opt_value(int argc, char **argv, int *i, const char *name)
{
    const char *a = argv[*i];
    size_t n = strlen(name);
    if (!strncmp(a, name, n) && a[n] == '=')
        return a + n + 1;
    if (*i + 1 >= argc)
        fail(EXIT_USAGE, "%s needs a value", name);
    return argv[++*i];
}

static int is_opt(const char *a, const char *s, const char *l)
{
    size_t n = l ? strlen(l) : 0;
    return (s && !strcmp(a, s)) || (l && !strncmp(a, l, n) && (a[n] == '\0' || a[n] == '='));
}

/* A flag (no value): --force=no would otherwise force. */
static int is_flag(const char *a, const char *s, const char *l)
{
    if (!is_opt(a, s, l))
        return 0;
    if (strchr(a, '='))
        fail(EXIT_USAGE, "%s takes no value", l);
    return 1;
}

static long parse_num(const char *s, const char *what, long lo, long hi)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || !*s || *end || v < lo || v > hi)
        fail(EXIT_USAGE, "%s wants a number from %ld to %ld, not '%s'", what, lo, hi, s);
    return v;
}

/* An option that takes a value, given twice, is refused: the second would
 * silently win (two keys, two ciphers or two outputs in one command line
 * are a script's mistake, not a choice). */
static const char *once(const char *prev, const char *value, const char *name)
{
    if (prev)
        fail(EXIT_USAGE, "%s given twice", name);
    return value;
}

/* once for an option whose value is a number: *given says it was seen */
static void once_flag(int *given, const char *name)
{
    if (*given)
        fail(EXIT_USAGE, "%s given twice", name);
    *given = 1;
}

static void parse_crypt_opts(int argc, char **argv, cli_opts *o)
{
    int threads_given = 0, cost_given = 0;
    o->inputs = calloc((size_t)argc + 1, sizeof *o->inputs);
    if (!o->inputs)
        fail(EXIT_INTERNAL, "out of memory");
    o->scrypt_log2n = SCRYPT_LOG2N_DEFAULT;
    int only_files = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (only_files || a[0] != '-' || !strcmp(a, "-")) {
            o->inputs[o->ninputs++] = a;
        } else if (!strcmp(a, "--")) {
            only_files = 1;
        } else if (is_flag(a, "-h", "--help")) {
            usage_exit(o->decrypt ? usage_decrypt : usage_encrypt, 0);
        } else if (is_opt(a, "-c", "--cipher")) {
            o->cipher_arg = once(o->cipher_arg, opt_value(argc, argv, &i, "--cipher"), "--cipher");
        } else if (is_opt(a, "-k", "--key")) {
            o->key_hex = once(o->key_hex, opt_value(argc, argv, &i, "--key"), "--key");
        } else if (is_opt(a, NULL, "--key-file")) {
            o->key_file = once(o->key_file, opt_value(argc, argv, &i, "--key-file"), "--key-file");
        } else if (is_opt(a, "-p", "--password")) {
            if (strchr(a, '='))
                fail(EXIT_USAGE, "--password takes no value (it asks, or reads KUAI_PASSWORD)");
            o->password = 1;
        } else if (is_opt(a, NULL, "--scrypt-log2n")) {
            once_flag(&cost_given, "--scrypt-log2n");
            o->scrypt_log2n = (int)parse_num(opt_value(argc, argv, &i, "--scrypt-log2n"),
                                             "--scrypt-log2n", SCRYPT_LOG2N_MIN, SCRYPT_LOG2N_MAX);
        } else if (is_opt(a, "-o", "--output")) {
            o->out = once(o->out, opt_value(argc, argv, &i, "--output"), "--output");
        } else if (is_opt(a, "-j", "--threads")) {
            once_flag(&threads_given, "-j/--threads");
            o->threads =
                (unsigned)parse_num(opt_value(argc, argv, &i, "--threads"), "-j/--threads", 1, 64);
        } else if (!strncmp(a, "-j", 2) && a[2]) {
            once_flag(&threads_given, "-j/--threads");
            o->threads = (unsigned)parse_num(a + 2, "-j/--threads", 1, 64);
        } else if (is_flag(a, "-f", "--force")) {
            o->force = 1;
        } else if (is_flag(a, "-q", "--quiet")) {
            o->quiet = 1;
        } else if (is_flag(a, NULL, "--raw")) {
            o->raw = 1;
        } else if (is_opt(a, NULL, "--iv")) {
            o->iv_hex = once(o->iv_hex, opt_value(argc, argv, &i, "--iv"), "--iv");
        } else if (is_flag(a, NULL, "--nopad") || is_flag(a, NULL, "--no-pad")) {
            o->nopad = 1;
        } else {
            fail(EXIT_USAGE, "unknown option '%s' (see kuai %s --help)", a, cli_cmd);
        }
    }
    if (!threads_given)
        o->threads = default_threads();
    /* the cost of a new password file: decryption reads it from the header,
     * and a key has none (it was taken and ignored) */
    if (cost_given && (o->decrypt || !o->password || o->raw))
        fail(EXIT_USAGE, "--scrypt-log2n goes with encrypt --password (decrypt reads the cost "
                         "from the header)");
    /* an empty name (a script's unset variable) is no file: said before any
     * input is read, not as an open's ENOENT after it */
    if (o->out && !*o->out)
        fail(EXIT_USAGE, "--output: empty file name");
    /* as for inputs, "-" is the standard stream (it made a file named "-";
     * ./- names one) */
    if (o->out && !strcmp(o->out, "-"))
        o->out = NULL;
    for (size_t i = 0; i < o->ninputs; i++)
        if (!*o->inputs[i])
            fail(EXIT_USAGE, "empty input file name (use - for standard input)");
    if (o->raw) {
        if (!o->cipher_arg)
            fail(EXIT_USAGE, "--raw needs --cipher NAME-MODE (e.g. sm4-cbc, aes-128-ctr)");
        if (parse_raw_cipher(o->cipher_arg, &o->cipher, &o->mode)) {
            msg("unknown cipher '%s'; with --raw give NAME-ecb, -cbc, -ctr, -cfb or -ofb, NAME "
                "one of:",
                o->cipher_arg);
            print_cipher_names(stderr);
            fputc('\n', stderr);
            cli_exit(EXIT_USAGE);
        }
        if (o->password)
            fail(EXIT_USAGE, "--raw takes --key or --key-file, not --password");
        if (o->mode == MODE_ECB && o->iv_hex)
            fail(EXIT_USAGE, "ECB takes no IV");
        if (o->mode != MODE_ECB && !o->iv_hex)
            fail(EXIT_USAGE, "%s needs --iv HEX", o->cipher_arg);
        if (raw_mode_is_stream(o->mode) && o->nopad)
            fail(EXIT_USAGE, "--nopad is for ECB and CBC; CTR, CFB and OFB are never padded");
        if (o->iv_hex) {
            /* checked here, before any output exists */
            uint8_t iv[KUAI_MAX_BLOCK];
            size_t n, bs = kuai_block_size(o->cipher);
            if (hex_decode(o->iv_hex, iv, sizeof iv, &n) || n != bs)
                fail(EXIT_USAGE, "--iv: need %zu hex digits (one %zu-byte block) for %s", bs * 2,
                     bs, o->cipher_arg);
        }
    } else {
        if (o->iv_hex || o->nopad)
            fail(EXIT_USAGE, "--iv and --nopad go with --raw (the container makes its own "
                             "nonces)");
        if (o->cipher_arg && parse_cipher(o->cipher_arg, &o->cipher)) {
            msg("unknown cipher '%s'; one of:", o->cipher_arg);
            print_cipher_names(stderr);
            fputs(" (a mode suffix such as -cbc goes with --raw)\n", stderr);
            cli_exit(EXIT_USAGE);
        }
        if (!o->decrypt && !o->cipher_arg)
            fail(EXIT_USAGE, "--cipher NAME is required (e.g. --cipher sm4)");
    }
}

static int is_dir(const char *p)
{
    struct stat st;
    return p && stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

/* DIR/BASENAME with the suffix the command gives it. */
static char *output_name(const cli_opts *o, const char *dir, const char *in)
{
    char *b = strdup(in);
    if (!b)
        fail(EXIT_INTERNAL, "out of memory");
    char *base = basename(b);
    const char *suffix = o->raw ? ".enc" : ".kuai";
    size_t bl = strlen(base), sl = strlen(suffix);
    size_t n = strlen(dir) + bl + 16;
    char *out = xmalloc(n);
    if (!o->decrypt)
        snprintf(out, n, "%s/%s%s", dir, base, suffix);
    else if (bl > sl && !strcmp(base + bl - sl, suffix))
        snprintf(out, n, "%s/%.*s", dir, (int)(bl - sl), base);
    else
        snprintf(out, n, "%s/%s.out", dir, base);
    free(b);
    return out;
}

static int same_file(const struct stat *a, const struct stat *b)
{
    return a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

/* An input named on the command line ("-": standard input), before it is
 * opened, and its name in messages. */
static int stat_input(const char *in, struct stat *st)
{
    return strcmp(in, "-") ? stat(in, st) : fstat(STDIN_FILENO, st);
}

static const char *input_label(const char *in)
{
    return strcmp(in, "-") ? in : "standard input";
}

/* An input and an output that are one file, pipe or block device: the
 * output would be written over the input while it is read (a FIFO or pipe:
 * kuai would read its own output back). Character devices (/dev/null to
 * /dev/null) are left alone. */
static int same_data(const struct stat *in, const struct stat *out)
{
    return (S_ISREG(in->st_mode) || S_ISFIFO(in->st_mode) || S_ISBLK(in->st_mode)) &&
           same_file(in, out);
}

/* Where an output will land, for comparing two: the file itself where it
 * exists (through its links, which output_open writes through), else its
 * directory's real path and its name (output_check has found that
 * directory); NULL for standard output. */
static char *output_real_path(const char *path)
{
    if (!path)
        return NULL;
    char *r = realpath(path, NULL);
    if (r)
        return r;
    if (errno != ENOENT)
        fail(EXIT_IO, "%s: %s", path, strerror(errno));
    char *d = strdup(path), *b = strdup(path);
    if (!d || !b)
        fail(EXIT_INTERNAL, "out of memory");
    char *dir = realpath(dirname(d), NULL);
    if (!dir)
        fail(EXIT_IO, "%s: %s", path, strerror(errno));
    const char *base = basename(b);
    size_t n = strlen(dir) + strlen(base) + 2;
    char *out = xmalloc(n);
    snprintf(out, n, "%s/%s", dir, base);
    free(dir);
    free(d);
    free(b);
    return out;
}

static int open_input(const char *in)
{
    if (!strcmp(in, "-"))
        return STDIN_FILENO;
    /* /dev/stdin of a kuai started with <&- would open the /dev/null that
     * stands in for it (cli_std_fds): an empty input, exit 0 */
    if (cli_names_closed_std(in))
        fail(EXIT_IO, "%s: cannot read: it is closed", in);
    int fd = open(in, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        fail(EXIT_IO, "%s: cannot open: %s", in, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode))
        fail(EXIT_IO, "%s: is a directory", in);
    return fd;
}

/* The checks of cmd_crypt on what was opened, not on the name: a name such
 * as /dev/fd/N or /proc/thread-self/fd/N means whatever that descriptor
 * holds when kuai opens it, not what stat saw before. */
static void input_not_output(int fd, const char *name, char *const *outs, size_t nouts)
{
    struct stat si, so;
    if (fstat(fd, &si) != 0)
        return;
    for (size_t k = 0; k < nouts; k++)
        if ((outs[k] ? stat(outs[k], &so) : fstat(STDOUT_FILENO, &so)) == 0 && same_data(&si, &so))
            fail(EXIT_USAGE, "%s: input and %s are the same file", name,
                 outs[k] ? outs[k] : "standard output");
}

static int cmd_crypt(int argc, char **argv, int decrypt)
{
    cli_opts O, *o = &O;
    memset(o, 0, sizeof *o);
    o->decrypt = decrypt;
    parse_crypt_opts(argc, argv, o);
    if (!o->ninputs)
        o->inputs[o->ninputs++] = "-";
    int dir_out = o->ninputs > 1 || is_dir(o->out);
    if (o->ninputs > 1 && !is_dir(o->out))
        fail(EXIT_USAGE, "several inputs need -o DIR, an existing directory");
    size_t nstdin = 0;
    for (size_t i = 0; i < o->ninputs; i++)
        nstdin += !strcmp(o->inputs[i], "-");
    if (dir_out && nstdin)
        fail(EXIT_USAGE, "standard input ('-') has no name to put in -o DIR");
    /* closed when kuai started (<&-, >&-): /dev/null stands in for it
     * (cli_std_fds), which would read as an empty input or swallow the
     * output with exit 0 */
    if (nstdin && cli_std_closed[STDIN_FILENO])
        fail(EXIT_IO, "standard input: cannot read: it is closed");
    if (!o->out && cli_std_closed[STDOUT_FILENO])
        fail(EXIT_IO, "standard output: cannot write: it is closed");

    if (!o->raw && !decrypt && o->cipher) {
        /* Fail early, before any output exists, when the cipher is not in
         * this build (AES before its backends land). */
        kuai_key probe;
        static const uint8_t zero[32];
        int rc = kuai_key_init(&probe, o->cipher, zero, kuai_key_size(o->cipher));
        if (rc == KUAI_ERR_UNSUPPORTED || rc == KUAI_ERR_BACKEND)
            fail(EXIT_UNAVAIL, "%s: %s", kuai_cipher_name(o->cipher), cli_strerror(rc, o->cipher));
        kuai_key_wipe(&probe);
    }

    if (!decrypt && !o->out && isatty(STDOUT_FILENO))
        fail(EXIT_USAGE, "not writing ciphertext to a terminal; use -o FILE or redirect");

    /* Name every output and refuse existing ones before anything is
     * written. */
    char **outs = calloc(o->ninputs, sizeof *outs);
    char **reals = calloc(o->ninputs, sizeof *reals); /* output_real_path of each */
    if (!outs || !reals)
        fail(EXIT_INTERNAL, "out of memory");
    for (size_t i = 0; i < o->ninputs; i++) {
        outs[i] = dir_out ? output_name(o, o->out, o->inputs[i]) : (char *)o->out;
        output_check(outs[i], o->force);
        /* a/x and b/x both become DIR/x.kuai: the second would replace the
         * first */
        for (size_t j = 0; j < i; j++)
            if (outs[i] && outs[j] && !strcmp(outs[i], outs[j]))
                fail(EXIT_USAGE, "%s and %s would both be written to %s", o->inputs[j],
                     o->inputs[i], outs[i]);
        /* ... or the same file under two names (a directory reached through
         * a link, a link to the other output) */
        reals[i] = output_real_path(outs[i]);
        for (size_t j = 0; reals[i] && j < i; j++)
            if (reals[j] && !strcmp(reals[i], reals[j]))
                fail(EXIT_USAGE, "%s and %s would both be written to %s (as %s and %s)",
                     o->inputs[j], o->inputs[i], reals[i], outs[j], outs[i]);
        /* An input that is the output file would be overwritten while it
         * is read (or, appended to, read forever): standard input too
         * (`-o a - < a` is `-o a a`), and standard output without -o
         * (`a > a`, `a >> a`, `a 1<>a`). Every input, not only the one
         * this output is made from: with several inputs and --force,
         * `-o d b d/b.kuai` would replace the input d/b.kuai with b's
         * ciphertext. A key file too: --force would replace the key with
         * the ciphertext. */
        struct stat si, so;
        if ((outs[i] ? stat(outs[i], &so) : fstat(STDOUT_FILENO, &so)) == 0) {
            const char *out_what = outs[i] ? "output" : "standard output";
            for (size_t j = 0; j < o->ninputs; j++) {
                if (stat_input(o->inputs[j], &si) == 0 && same_data(&si, &so)) {
                    if (j == i)
                        fail(EXIT_USAGE, "%s: input and %s are the same file",
                             input_label(o->inputs[j]), out_what);
                    fail(EXIT_USAGE, "%s: input and the output for %s are the same file",
                         o->inputs[j], o->inputs[i]);
                }
            }
            if (o->key_file && stat(o->key_file, &si) == 0 && same_data(&si, &so))
                fail(EXIT_USAGE, "%s: key file and %s are the same file", o->key_file, out_what);
        }
    }
    for (size_t i = 0; i < o->ninputs; i++)
        free(reals[i]);
    free(reals);
    /* A key file that is an input's pipe or FIFO (--key-file /dev/stdin
     * with standard input as the input): the two would split one stream
     * between them. */
    struct stat sk;
    if (o->key_file && stat(o->key_file, &sk) == 0 && !S_ISREG(sk.st_mode) && !S_ISCHR(sk.st_mode))
        for (size_t j = 0; j < o->ninputs; j++) {
            struct stat si;
            if (stat_input(o->inputs[j], &si) == 0 && same_file(&si, &sk))
                fail(EXIT_USAGE, "%s: key file and input %s are the same pipe", o->key_file,
                     input_label(o->inputs[j]));
        }

    /* The keys last: a run refused anyway (an output that exists, or in a
     * directory missing or not writable, a terminal) is refused before the
     * password is asked for. */
    key_material km;
    size_t want = o->cipher ? kuai_key_size(o->cipher) : 0;
    load_keys(o, &km, o->password ? 0 : want);
    if (km.nkeys > 1 && (!o->raw || km.nkeys != o->ninputs))
        fail(EXIT_USAGE,
             "%s holds %zu keys: several keys are for --raw with that many inputs (one each)",
             o->key_file, km.nkeys);

    int rc = 0;
    progress pg;
    if (o->raw && o->mode == MODE_CBC && !decrypt && o->ninputs > 1) {
        int *fds = calloc(o->ninputs, sizeof *fds);
        output *os = calloc(o->ninputs, sizeof *os);
        if (!fds || !os)
            fail(EXIT_INTERNAL, "out of memory");
        /* every input open before the first output exists */
        for (size_t i = 0; i < o->ninputs; i++) {
            fds[i] = open_input(o->inputs[i]);
            input_not_output(fds[i], o->inputs[i], outs, o->ninputs);
        }
        for (size_t i = 0; i < o->ninputs; i++) {
            output_open(&os[i], outs[i], o->force);
            /* DIR/NAME.enc, a link to a terminal: as below */
            if (os[i].direct && isatty(os[i].fd))
                fail(EXIT_USAGE, "%s: not writing ciphertext to a terminal", outs[i]);
            output_like_input(&os[i], fds[i]);
            output_create(&os[i]);
        }
        rc = raw_cbc_encrypt_lockstep(o, &km, fds, os, o->ninputs, &pg);
        for (size_t i = 0; i < o->ninputs; i++)
            close(fds[i]);
        output_end(os, o->ninputs, rc);
        free(fds);
        free(os);
    } else {
        /* Every output is finished before the first is moved into place: a
         * failure on the last input leaves all the existing outputs as
         * they were. */
        output *os = calloc(o->ninputs, sizeof *os);
        if (!os)
            fail(EXIT_INTERNAL, "out of memory");
        size_t n = 0;
        for (size_t i = 0; i < o->ninputs && !rc; i++, n++) {
            const char *in = o->inputs[i];
            const char *name = input_label(in);
            int fd = open_input(in);
            input_not_output(fd, name, outs, o->ninputs);
            output *out = &os[i];
            output_open(out, outs[i], o->force);
            /* -o naming a terminal, as standard output is checked above */
            if (!decrypt && out->direct && isatty(out->fd))
                fail(EXIT_USAGE, "%s: not writing ciphertext to a terminal", outs[i]);
            output_like_input(out, fd);
            if (o->raw) {
                output_create(out);
                rc = raw_run(o, &km, i, fd, out, &pg, name);
            }
            /* the container makes its temporary file once the keys are derived */
            else if (decrypt)
                rc = container_decrypt(o, &km, fd, out, &pg, name);
            else
                rc = container_encrypt(o, &km, fd, out, &pg, name);
            if (fd != STDIN_FILENO)
                close(fd);
            if (!rc)
                output_finish(out); /* synced and closed: one descriptor at a time */
        }
        output_end(os, n, rc);
        free(os);
    }
    if (dir_out)
        for (size_t i = 0; i < o->ninputs; i++)
            free(outs[i]);
    free(outs);
    free(o->inputs);
    free_keys(&km);
    return rc;
}

/* speed --json FILE: the report is an output like encrypt's -o (docs/cli.md,
 * "Where the output goes"), through the same helpers: what the name is, and
 * so how it is written, is fixed before the run (an existing file needs
 * --force); after the run the report goes to a temporary file, which
 * replaces the file found at the start only if that file is still there,
 * or is made without replacing anything that appeared meanwhile. */
static output speed_out;
static int speed_force;

static void speed_report_check(const char *path)
{
    if (!*path)
        fail(EXIT_USAGE, "--json: an empty file name");
    output_check(path, speed_force);
    output_prepare(&speed_out, path, speed_force);
}

static FILE *speed_report_open(const char *path)
{
    (void)path;
    output_create(&speed_out);
    int fd = fcntl(speed_out.fd, F_DUPFD_CLOEXEC, 3);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!f)
        fail(EXIT_IO, "%s: cannot write: %s", out_name(&speed_out), strerror(errno));
    return f;
}

static void speed_report_commit(FILE *f, const char *path)
{
    (void)path;
    int err = fflush(f) != 0 || ferror(f) ? (errno ? errno : EIO) : 0;
    if (fclose(f) != 0 && !err)
        err = errno;
    if (err)
        fail(EXIT_IO, "%s: write error: %s", out_name(&speed_out), strerror(err));
    output_commit(&speed_out);
}

static const kuai_bench_report_io speed_report = {speed_report_check, speed_report_open,
                                                  speed_report_commit};

static int cmd_speed(int argc, char **argv)
{
    /* --force (-f) is the tool's, not the benchmark's: taken out of the
     * arguments, which keep their order (a value such as --json's is
     * passed on as it is, even "-f") */
    static const char *const with_value[] = {"--json", "--backend", "--cipher",    "--reps",
                                             "--mode", "--threads", "--child-rows"};
    char **args = xmalloc(((size_t)argc + 1) * sizeof *args);
    int n = 0;
    for (int i = 0; i < argc; i++) {
        int value = 0;
        for (size_t j = 0; i > 0 && j < sizeof with_value / sizeof with_value[0]; j++)
            value |= !strcmp(argv[i], with_value[j]);
        if (i > 0 && (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help"))) {
            fputs(usage_speed, stdout);
            free(args);
            return 0;
        }
        if (i > 0 && (!strcmp(argv[i], "-f") || !strcmp(argv[i], "--force"))) {
            speed_force = 1;
            continue;
        }
        args[n++] = argv[i];
        if (value && i + 1 < argc)
            args[n++] = argv[++i];
    }
    args[n] = NULL;
    kuai_bench_report = &speed_report;
    int rc = kuai_bench_main("kuai speed", n, args);
    free(args);
    return rc;
}

int main(int argc, char **argv)
{
    cli_std_fds(); /* before anything is opened */
    cli_no_core_dumps();
    if (argc < 2)
        usage_exit(usage_main, EXIT_USAGE);
    const char *cmd = argv[1];
    if (!strcmp(cmd, "-h") || !strcmp(cmd, "--help"))
        usage_exit(usage_main, 0);
    /* an argument more is a mistake (as for selftest and info), not ignored */
    if ((!strcmp(cmd, "--version") || !strcmp(cmd, "version") || !strcmp(cmd, "help")) &&
        argc > 2 + !strcmp(cmd, "help"))
        fail(EXIT_USAGE, "%s: unexpected argument '%s'", cmd, argv[2 + !strcmp(cmd, "help")]);
    if (!strcmp(cmd, "--version") || !strcmp(cmd, "version")) {
        printf("kuai %s\n", KUAI_VERSION);
        return cli_stdout_end(0);
    }
    if (!strcmp(cmd, "help")) {
        if (argc < 3)
            usage_exit(usage_main, 0);
        const char *h = argv[2];
        if (!strcmp(h, "encrypt"))
            usage_exit(usage_encrypt, 0);
        if (!strcmp(h, "decrypt"))
            usage_exit(usage_decrypt, 0);
        char *args[] = {argv[0], "--help", NULL};
        if (!strcmp(h, "speed"))
            return cli_stdout_end(cmd_speed(2, args));
        if (!strcmp(h, "selftest"))
            return cli_stdout_end(cmd_selftest(2, args));
        if (!strcmp(h, "info"))
            return cli_stdout_end(cmd_info(2, args));
        fail(EXIT_USAGE, "no command '%s' (encrypt, decrypt, speed, selftest, info)", h);
    }
    cli_cmd = cmd;
    if (!strcmp(cmd, "encrypt") || !strcmp(cmd, "enc"))
        return cmd_crypt(argc - 1, argv + 1, 0);
    if (!strcmp(cmd, "decrypt") || !strcmp(cmd, "dec"))
        return cmd_crypt(argc - 1, argv + 1, 1);
    if (!strcmp(cmd, "speed"))
        return cli_stdout_end(cmd_speed(argc - 1, argv + 1));
    if (!strcmp(cmd, "selftest"))
        return cli_stdout_end(cmd_selftest(argc - 1, argv + 1));
    if (!strcmp(cmd, "info"))
        return cli_stdout_end(cmd_info(argc - 1, argv + 1));
    cli_cmd = NULL;
    fail(EXIT_USAGE, "unknown command '%s' (encrypt, decrypt, speed, selftest, info; kuai --help)",
         cmd);
}
