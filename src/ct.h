/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Marking values public for the constant-time check (make test-ct).
 *
 * The check runs the library under valgrind's memcheck with keys and data
 * marked undefined, so any branch or address that depends on them is
 * reported. A few results are public by design -- the verdict of a tag
 * comparison, for one -- and the library branches on them; kuai_declassify
 * tells memcheck so. In every other build it is nothing at all.
 */
#ifndef KUAI_CT_H
#define KUAI_CT_H

#ifdef KUAI_CTGRIND
#include <valgrind/memcheck.h>
#define kuai_declassify(p, n) ((void)VALGRIND_MAKE_MEM_DEFINED((p), (n)))
#else
#define kuai_declassify(p, n) ((void)(p), (void)(n))
#endif

#endif
