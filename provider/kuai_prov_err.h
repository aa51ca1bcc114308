/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The provider's error reasons and how it puts them on OpenSSL's error
 * queue: through the core's upcalls (OSSL_FUNC_CORE_NEW_ERROR,
 * SET_ERROR_DEBUG, VSET_ERROR), as provider-base(7) has a provider do it,
 * under the error library the core gives the provider (named after it:
 * "kuai"), with the texts OSSL_FUNC_PROVIDER_GET_REASON_STRINGS hands the
 * core (kuai_prov_err.c). Internal to kuai.so; the EVP test includes it for
 * the codes and texts alone.
 */
#ifndef KUAI_PROV_ERR_H
#define KUAI_PROV_ERR_H

#include <openssl/core.h>
#include <openssl/core_dispatch.h>

/* Every reason, once: its name, its code and its text. Codes from 100 up,
 * as OpenSSL's own libraries; never reused, as a program may test them. */
#define KP_REASONS(X)                                                                              \
    X(KP_R_BAD_DECRYPT, 100, "bad decrypt")                                                        \
    X(KP_R_WRONG_FINAL_BLOCK_LENGTH, 101, "wrong final block length")                              \
    X(KP_R_INVALID_KEY_LENGTH, 102, "invalid key length")                                          \
    X(KP_R_INVALID_IV_LENGTH, 103, "invalid iv length")                                            \
    X(KP_R_INVALID_TAG_LENGTH, 104, "invalid tag length")                                          \
    X(KP_R_TAG_NOT_SET, 105, "tag not set")                                                        \
    X(KP_R_TAG_NOT_NEEDED, 106, "tag not needed")                                                  \
    X(KP_R_TAG_VERIFY_FAILED, 107, "tag verify failed")                                            \
    X(KP_R_NO_KEY_SET, 108, "no key set")                                                          \
    X(KP_R_NO_IV_SET, 109, "no iv set")                                                            \
    X(KP_R_IV_ALREADY_USED, 110, "message finished, a new iv is needed")                           \
    X(KP_R_OVERLAPPING_BUFFERS, 111, "overlapping buffers")                                        \
    X(KP_R_OUTPUT_BUFFER_TOO_SMALL, 112, "output buffer too small")                                \
    X(KP_R_INVALID_INPUT_LENGTH, 113, "invalid input length")                                      \
    X(KP_R_XTS_DUPLICATED_KEYS, 114, "xts duplicated keys")                                        \
    X(KP_R_FAILED_TO_SET_PARAMETER, 115, "failed to set parameter")                                \
    X(KP_R_FAILED_TO_GET_PARAMETER, 116, "failed to get parameter")                                \
    X(KP_R_WRONG_CALL_ORDER, 117, "call out of order")                                             \
    X(KP_R_TLS_RECORD_FAILED, 118, "tls record failed")                                            \
    X(KP_R_CIPHER_OPERATION_FAILED, 119, "cipher operation failed")                                \
    X(KP_R_RANDOM_FAILED, 120, "random bytes not available")                                       \
    X(KP_R_OUT_OF_MEMORY, 121, "out of memory")

#define KP_REASON_ENUM(name, code, text) name = code,
enum kp_reason { KP_REASONS(KP_REASON_ENUM) };
#undef KP_REASON_ENUM

/* What a provider context holds: the core's handle and its error upcalls,
 * each NULL where the core offers none (then nothing is raised). Set up
 * once by OSSL_provider_init, read-only after; one per load of the module
 * (each library context has its own handle). */
typedef struct kp_core {
    const OSSL_CORE_HANDLE *handle;
    OSSL_FUNC_core_new_error_fn *new_error;
    OSSL_FUNC_core_set_error_debug_fn *set_error_debug;
    OSSL_FUNC_core_vset_error_fn *vset_error;
    struct kp_core *next; /* kp_core_register's list */
} kp_core;

/* Takes the upcalls core has among in (the dispatch table the core gives
 * OSSL_provider_init). */
void kp_core_init(kp_core *core, const OSSL_CORE_HANDLE *handle, const OSSL_DISPATCH *in);
/* OSSL_FUNC_PROVIDER_GET_REASON_STRINGS: every reason's code and text. */
const OSSL_ITEM *kp_reason_strings(void *provctx);

/* Raises reason on the error queue through core (NULL: nothing), with
 * file, line and function, and, when fmt is not NULL, printf-style data
 * shown after the reason. Returns 0, so a failing function can return it.
 * Never give it anything that depends on secret bytes (a key, a TLS
 * record's padding): it may only say what a failed call shows anyway. */
int kp_raise_at(const kp_core *core, const char *file, int line, const char *func, int reason,
                const char *fmt, ...) __attribute__((format(printf, 6, 7)));
/* The file's name alone where the compiler has it (gcc 12, clang 9): the
 * build directory has no business in the module or in a user's errors. */
#ifdef __FILE_NAME__
#define KP_FILE __FILE_NAME__
#else
#define KP_FILE __FILE__
#endif
/* A load's core is registered at OSSL_provider_init and unregistered at
 * its teardown, so that a function the core calls without a provider
 * context (OSSL_FUNC_CIPHER_GET_PARAMS) can still raise: through any
 * registered core that has the upcalls. Errors go on the calling thread's
 * queue whichever load's core carries them, and every load's error library
 * is named "kuai" with the same texts; while such a function runs, the load
 * it was fetched from is registered. */
void kp_core_register(kp_core *core);
void kp_core_unregister(kp_core *core);
int kp_raise_any_at(const char *file, int line, const char *func, int reason, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
#define kp_raise_any_data(reason, ...)                                                             \
    kp_raise_any_at(KP_FILE, __LINE__, __func__, reason, __VA_ARGS__)
#define kp_raise(core, reason) kp_raise_at(core, KP_FILE, __LINE__, __func__, reason, NULL)
#define kp_raise_data(core, reason, ...)                                                           \
    kp_raise_at(core, KP_FILE, __LINE__, __func__, reason, __VA_ARGS__)

#endif
