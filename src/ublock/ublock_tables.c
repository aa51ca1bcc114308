/* SPDX-License-Identifier: Apache-2.0 */
/* uBlock permutation tables (the key schedule's are in ublock_ref.c).
 * Source: ../shared/spec/ublock.md, "Tables" (Wu, Zhang, Zheng, Li,
 * Journal of Cryptologic Research 2019, 6(6)). */
#include "ublock.h"

const uint8_t ublock_pl128[8] = {1, 3, 4, 6, 0, 2, 7, 5};
const uint8_t ublock_pr128[8] = {2, 7, 5, 0, 1, 6, 4, 3};
const uint8_t ublock_pl256[16] = {2, 7, 8, 13, 3, 6, 9, 12, 1, 4, 15, 10, 14, 11, 5, 0};
const uint8_t ublock_pr256[16] = {6, 11, 1, 12, 9, 4, 2, 15, 7, 0, 13, 10, 14, 3, 8, 5};
const uint8_t ublock_pl128_inv[8] = {4, 0, 5, 1, 2, 7, 3, 6};
const uint8_t ublock_pr128_inv[8] = {3, 4, 0, 7, 6, 2, 5, 1};
const uint8_t ublock_pl256_inv[16] = {15, 8, 0, 4, 9, 14, 5, 1, 2, 6, 11, 13, 7, 3, 12, 10};
const uint8_t ublock_pr256_inv[16] = {9, 2, 6, 13, 5, 15, 0, 8, 14, 4, 11, 1, 3, 10, 12, 7};
