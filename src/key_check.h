/* SPDX-License-Identifier: Apache-2.0 */
/* Whether a kuai_key is set up: a leaf every layer may use. */
#ifndef KUAI_KEY_CHECK_H
#define KUAI_KEY_CHECK_H

#include "kuai.h"

#define KUAI_KEY_MAGIC 0x6b756169u /* "kuai": set by init, cleared by wipe */

/* KUAI_OK for a key that kuai_key_init set up and nobody wiped since,
 * KUAI_ERR_ARG for NULL, KUAI_ERR_KEY otherwise. */
static inline int kuai_key_check(const kuai_key *k)
{
    if (!k)
        return KUAI_ERR_ARG;
    if (k->priv_magic != KUAI_KEY_MAGIC || !k->priv_impl)
        return KUAI_ERR_KEY;
    return KUAI_OK;
}

#endif
