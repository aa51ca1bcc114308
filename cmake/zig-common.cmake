# SPDX-License-Identifier: Apache-2.0
# Shared part of the zig cc cross toolchains (aarch64-zig.cmake,
# loongarch64-zig.cmake): static musl binaries that qemu-user runs as they
# are. Zig comes from PyPI (ziglang, pinned in the Makefile) in the
# project's venv; the wrappers in cmake/zig/ call it (KUAI_ZIG_PYTHON in the
# environment names another Python that has it).
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR ${KUAI_ZIG_ARCH})
set(CMAKE_C_COMPILER "${CMAKE_CURRENT_LIST_DIR}/zig/${KUAI_ZIG_ARCH}-cc")
set(CMAKE_AR "${CMAKE_CURRENT_LIST_DIR}/zig/ar" CACHE FILEPATH "" FORCE)
set(CMAKE_RANLIB "${CMAKE_CURRENT_LIST_DIR}/zig/ranlib" CACHE FILEPATH "" FORCE)
set(CMAKE_EXE_LINKER_FLAGS_INIT "-static")

# Nothing of the host's (OpenSSL, libgcrypt) is for the target.
set(CMAKE_FIND_ROOT_PATH "${CMAKE_CURRENT_LIST_DIR}/zig/no-sysroot")
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
