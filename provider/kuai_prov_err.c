/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The provider's reasons on OpenSSL's error queue (kuai_prov_err.h). A
 * provider loaded as a module may not call ERR_raise itself: its errors go
 * through the core, which packs them under the error library it gave the
 * provider, so that ERR_error_string prints "kuai" and the reason's text.
 */
#include "kuai_prov_err.h"

#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>

/* The reasons' texts for the core, ended by {0, NULL}. */
#define KP_REASON_ITEM(name, code, text) {name, (void *)text},
static const OSSL_ITEM kp_reason_items[] = {KP_REASONS(KP_REASON_ITEM){0, NULL}};
#undef KP_REASON_ITEM

const OSSL_ITEM *kp_reason_strings(void *provctx)
{
    (void)provctx;
    return kp_reason_items;
}

void kp_core_init(kp_core *core, const OSSL_CORE_HANDLE *handle, const OSSL_DISPATCH *in)
{
    core->handle = handle;
    core->next = NULL;
    core->new_error = NULL;
    core->set_error_debug = NULL;
    core->vset_error = NULL;
    for (; in != NULL && in->function_id != 0; in++) {
        switch (in->function_id) {
        case OSSL_FUNC_CORE_NEW_ERROR:
            core->new_error = OSSL_FUNC_core_new_error(in);
            break;
        case OSSL_FUNC_CORE_SET_ERROR_DEBUG:
            core->set_error_debug = OSSL_FUNC_core_set_error_debug(in);
            break;
        case OSSL_FUNC_CORE_VSET_ERROR:
            core->vset_error = OSSL_FUNC_core_vset_error(in);
            break;
        default:
            break;
        }
    }
}

static int kp_vraise_at(const kp_core *core, const char *file, int line, const char *func,
                        int reason, const char *fmt, va_list ap)
{
    /* new_error starts the record vset_error fills: without both, no error
     * (a core may offer neither; the call still fails, silently) */
    if (core == NULL || core->new_error == NULL || core->vset_error == NULL)
        return 0;
    core->new_error(core->handle);
    if (core->set_error_debug != NULL)
        core->set_error_debug(core->handle, file, line, func);
    core->vset_error(core->handle, (uint32_t)reason, fmt, ap);
    return 0;
}

int kp_raise_at(const kp_core *core, const char *file, int line, const char *func, int reason,
                const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    kp_vraise_at(core, file, line, func, reason, fmt, ap);
    va_end(ap);
    return 0;
}

/* The cores of the loads not yet torn down, newest first. The lock keeps a
 * core (and the handle it holds, which the core frees after teardown) from
 * going while an error is raised through it. */
static pthread_mutex_t kp_cores_lock = PTHREAD_MUTEX_INITIALIZER;
static kp_core *kp_cores;

void kp_core_register(kp_core *core)
{
    pthread_mutex_lock(&kp_cores_lock);
    core->next = kp_cores;
    kp_cores = core;
    pthread_mutex_unlock(&kp_cores_lock);
}

void kp_core_unregister(kp_core *core)
{
    pthread_mutex_lock(&kp_cores_lock);
    for (kp_core **p = &kp_cores; *p != NULL; p = &(*p)->next) {
        if (*p == core) {
            *p = core->next;
            break;
        }
    }
    pthread_mutex_unlock(&kp_cores_lock);
}

int kp_raise_any_at(const char *file, int line, const char *func, int reason, const char *fmt, ...)
{
    pthread_mutex_lock(&kp_cores_lock);
    const kp_core *core = kp_cores;
    while (core != NULL && (core->new_error == NULL || core->vset_error == NULL))
        core = core->next;
    va_list ap;
    va_start(ap, fmt);
    kp_vraise_at(core, file, line, func, reason, fmt, ap);
    va_end(ap);
    pthread_mutex_unlock(&kp_cores_lock);
    return 0;
}
