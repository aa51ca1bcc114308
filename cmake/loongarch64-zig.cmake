# SPDX-License-Identifier: Apache-2.0
# LoongArch64 Linux, static musl, through zig cc (see zig-common.cmake).
set(KUAI_ZIG_ARCH loongarch64)
set(KUAI_ZIG_TARGET loongarch64-linux-musl)
include(${CMAKE_CURRENT_LIST_DIR}/zig-common.cmake)
