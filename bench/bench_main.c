/* SPDX-License-Identifier: Apache-2.0 */
/* kuai_bench: the benchmark driver of bench.c as its own program. */
#include "bench.h"

int main(int argc, char **argv)
{
    return kuai_bench_main("kuai_bench", argc, argv);
}
