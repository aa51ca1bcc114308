# SPDX-License-Identifier: Apache-2.0
# ARM64 Linux, static musl, through zig cc (see zig-common.cmake).
set(KUAI_ZIG_ARCH aarch64)
set(KUAI_ZIG_TARGET aarch64-linux-musl)
include(${CMAKE_CURRENT_LIST_DIR}/zig-common.cmake)
