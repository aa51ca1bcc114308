/*
 * uBlock, SSSE3 backend: ublock_v128.h (the bitsliced algorithm of
 * ublock_bs.h on 128-bit vectors) over xmm registers and pshufb.
 * Compiled with -mssse3 for this file only; chosen at run time.
 */
#include "ublock.h"

#include <string.h>
#include <tmmintrin.h>

typedef __m128i ub_v;
#define UB_V_BYTES 16
#define UB_ROW16(...)                                                                              \
    {                                                                                              \
        __VA_ARGS__                                                                                \
    }

#define ub_xor(a, b) _mm_xor_si128(a, b)
#define ub_and(a, b) _mm_and_si128(a, b)
#define ub_or(a, b) _mm_or_si128(a, b)
#define ub_andn(a, b) _mm_andnot_si128(a, b)
#define ub_srl64(x, n) _mm_srli_epi64(x, n)
#define ub_sll64(x, n) _mm_slli_epi64(x, n)
#define ub_set1_8(c) _mm_set1_epi8((char)(c))
#define ub_unpacklo64(a, b) _mm_unpacklo_epi64(a, b)
#define ub_unpackhi64(a, b) _mm_unpackhi_epi64(a, b)
#define ub_loadu(p) _mm_loadu_si128((const __m128i *)(const void *)(p))
#define ub_storeu(p, x) _mm_storeu_si128((__m128i *)(void *)(p), x)
#define ub_row(p) _mm_load_si128((const __m128i *)(const void *)(p))
#define ub_ones() _mm_set1_epi32(-1)

#define ub_shuf(x, idx) _mm_shuffle_epi8(x, idx)
#define ub_unpacklo32(a, b) _mm_unpacklo_epi32(a, b)
#define ub_unpackhi32(a, b) _mm_unpackhi_epi32(a, b)
#define ub_even32(a, b)                                                                            \
    _mm_castps_si128(                                                                              \
        _mm_shuffle_ps(_mm_castsi128_ps(a), _mm_castsi128_ps(b), _MM_SHUFFLE(2, 0, 2, 0)))
#define ub_odd32(a, b)                                                                             \
    _mm_castps_si128(                                                                              \
        _mm_shuffle_ps(_mm_castsi128_ps(a), _mm_castsi128_ps(b), _MM_SHUFFLE(3, 1, 3, 1)))

#include "ublock_bs.h"

static int ublock_ssse3_available(void)
{
    return (kuai_cpu_features() & KUAI_CPU_SSSE3) != 0;
}

#define UB_V128_ISA ssse3
#define UB_V128_NAME "ssse3"
#define UB_V128_AVAILABLE ublock_ssse3_available
#define UB_V128_NS128 2
#include "ublock_v128.h"
