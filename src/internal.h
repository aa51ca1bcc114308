/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Everything below the public API, by concern: CPU features (cpu.h), the
 * seam and its registry (seam.h), wiping (wipe.h) and the key check
 * (key_check.h). A file may include just the part it uses; this header is
 * all of them.
 */
#ifndef KUAI_INTERNAL_H
#define KUAI_INTERNAL_H

#include "cpu.h"
#include "key_check.h"
#include "seam.h"
#include "wipe.h"

#endif
