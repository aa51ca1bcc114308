# SPDX-License-Identifier: Apache-2.0
# make deb: Debian binary packages from the CMake install components, by
# CPack (`cpack -G DEB` in the build directory). CPack rather than a debian/
# directory: the install rules in CMakeLists.txt are the one description of
# what goes where, no debhelper is needed, and the packages come out of the
# same build the tests use.
#
#   libkuai0               component lib: libkuai.so.0*
#   libkuai-dev            component dev: kuai.h, libkuai.a, libkuai.so, kuai.pc, CMake files
#   kuai                   component tool: the kuai command, its man page (and completions)
#   kuai-openssl-provider  component provider: kuai.so in OpenSSL's module directory,
#                          an openssl.cnf example under /usr/share/doc
#   libkuai-file0          component filelib: libkuai_file.so.0* (the .kuai container;
#                          libcrypto)
#   libkuai-file-dev       component filedev: kuai_file.h, libkuai_file.a, libkuai_file.so,
#                          kuai-file.pc, the CMake file component (kuai::kuai_file)
# The two kuai_file packages are apart from libkuai0/libkuai-dev because
# they alone need OpenSSL (libssl3, libssl-dev).
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME kuai)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_VENDOR "kuai")
# The Maintainer field (and the changelog's signature): a placeholder that
# whoever publishes the packages replaces with a real address
# (-DKUAI_DEB_MAINTAINER=..., or make deb DEB_MAINTAINER=...); lintian calls
# the placeholder bogus-mail-host, the one lintian error make test-package
# lets pass.
set(KUAI_DEB_MAINTAINER "kuai maintainers <kuai@localhost>" CACHE STRING
  "Maintainer of the Debian packages of make deb")
set(CPACK_PACKAGE_CONTACT "${KUAI_DEB_MAINTAINER}")
# No CPACK_PACKAGE_DESCRIPTION_SUMMARY: CPack's DEB generator puts it in
# front of every component's description, so all six packages had one
# synopsis; each component's description below starts with its own.
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL lib dev tool provider)
if(TARGET kuai_file_shared)
  list(APPEND CPACK_COMPONENTS_ALL filelib filedev)
endif()
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION libs)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
# Binaries stripped as they go into the packages (the install step's
# strip: executables and shared objects; never libkuai.a), as Debian ships
# them. Stripped rather than split into -dbgsym packages: the Release build
# has no debug information to split (no -g), only symbol tables, and a
# debug build for the packages alone would not be the code the tests ran.
set(CPACK_STRIP_FILES ON)
# Run-time dependencies from the binaries (dpkg-shlibdeps, package dpkg-dev).
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS ON)
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS_POLICY ">=")

set(CPACK_DEBIAN_LIB_PACKAGE_NAME libkuai${KUAI_SOVERSION})
set(CPACK_DEBIAN_LIB_PACKAGE_SECTION libs)
set(CPACK_COMPONENT_LIB_DESCRIPTION "fast, constant-time block ciphers: uBlock, SM4, AES (shared library)
kuai is a C11 library of the block ciphers uBlock (128/128, 128/256,
256/256), SM4 and AES in ECB, CBC, CTR, GCM and multi-key modes, with a
backend per instruction set chosen at run time.")

set(CPACK_DEBIAN_DEV_PACKAGE_NAME libkuai-dev)
set(CPACK_DEBIAN_DEV_PACKAGE_SECTION libdevel)
set(CPACK_DEBIAN_DEV_PACKAGE_DEPENDS "libkuai${KUAI_SOVERSION} (= ${PROJECT_VERSION})")
set(CPACK_COMPONENT_DEV_DESCRIPTION "fast, constant-time block ciphers: uBlock, SM4, AES (development files)
Header, static library, pkg-config file (kuai.pc) and CMake package
(find_package(kuai), target kuai::kuai) of the kuai library.")

set(CPACK_DEBIAN_FILELIB_PACKAGE_NAME libkuai-file${KUAI_SOVERSION})
set(CPACK_DEBIAN_FILELIB_PACKAGE_SECTION libs)
# libkuai_file.so.0 needs libkuai.so.0 of this build, which no installed
# package provides when dpkg-shlibdeps runs: the exact version here, and
# the build directory as where dpkg-shlibdeps finds the library.
set(CPACK_DEBIAN_FILELIB_PACKAGE_DEPENDS "libkuai${KUAI_SOVERSION} (= ${PROJECT_VERSION})")
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS_PRIVATE_DIRS ${CMAKE_BINARY_DIR})
set(CPACK_COMPONENT_FILELIB_DESCRIPTION "encrypted .kuai container format of kuai (shared library)
kuai_file reads and writes the authenticated, chunked .kuai files of the
kuai command (uBlock, SM4 or AES; a raw key or a scrypt password) from a
C API, over libkuai and OpenSSL's libcrypto.")

set(CPACK_DEBIAN_FILEDEV_PACKAGE_NAME libkuai-file-dev)
set(CPACK_DEBIAN_FILEDEV_PACKAGE_SECTION libdevel)
set(CPACK_DEBIAN_FILEDEV_PACKAGE_DEPENDS
  "libkuai-file${KUAI_SOVERSION} (= ${PROJECT_VERSION}), libkuai-dev (= ${PROJECT_VERSION}), libssl-dev (>= 3)")
set(CPACK_COMPONENT_FILEDEV_DESCRIPTION "encrypted .kuai container format of kuai (development files)
Header kuai_file.h, static library, pkg-config file (kuai-file.pc) and
CMake component (find_package(kuai COMPONENTS file), target
kuai::kuai_file) of the kuai_file library.")

set(CPACK_DEBIAN_TOOL_PACKAGE_NAME kuai)
set(CPACK_DEBIAN_TOOL_PACKAGE_SECTION utils)
set(CPACK_COMPONENT_TOOL_DESCRIPTION "file encryption with uBlock, SM4 and AES (command-line tool)
The kuai command: authenticated encrypted containers, openssl-enc
compatible raw modes, self-test and benchmark of the kuai library.")

set(CPACK_DEBIAN_PROVIDER_PACKAGE_NAME kuai-openssl-provider)
set(CPACK_DEBIAN_PROVIDER_PACKAGE_SECTION libs)
set(CPACK_COMPONENT_PROVIDER_DESCRIPTION "OpenSSL 3 provider for uBlock, SM4 and AES from kuai
kuai.so in OpenSSL's module directory: UBLOCK-*, SM4-* (with SM4-GCM) and
AES-* ciphers under the property provider=kuai for every libcrypto program.
An openssl.cnf that prefers it is in
/usr/share/doc/kuai-openssl-provider/examples.")

# The shared libraries' packages refresh ld.so's cache through dpkg's
# ldconfig trigger, as Debian policy 8.1.1 asks (CPack's own postinst and
# postrm call ldconfig too, which lintian only warns about).
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/deb-triggers/triggers "activate-noawait ldconfig\n")
set(CPACK_DEBIAN_LIB_PACKAGE_CONTROL_EXTRA ${CMAKE_CURRENT_BINARY_DIR}/deb-triggers/triggers)
set(CPACK_DEBIAN_FILELIB_PACKAGE_CONTROL_EXTRA ${CMAKE_CURRENT_BINARY_DIR}/deb-triggers/triggers)

# Every package carries the licence and the NOTICE as its copyright file,
# and a changelog, which Debian requires of every package
# (/usr/share/doc/PKG/changelog.gz for a native version such as 0.1.0; gzip
# -9n like the man page). kuai keeps no changelog of its own, so it is one
# entry naming the version; dated by SOURCE_DATE_EPOCH when set, so that
# the packages can be rebuilt byte for byte. EXCLUDE_FROM_ALL: only in the
# packages, not in a plain cmake --install.
file(READ ${PROJECT_SOURCE_DIR}/NOTICE KUAI_NOTICE_TEXT)
string(TIMESTAMP KUAI_DEB_DATE "%a, %d %b %Y %H:%M:%S +0000" UTC)
find_program(KUAI_GZIP gzip REQUIRED) # the one the man page is compressed with, if found already
mark_as_advanced(KUAI_GZIP)
foreach(comp ${CPACK_COMPONENTS_ALL})
  string(TOUPPER ${comp} COMP)
  set(pkg ${CPACK_DEBIAN_${COMP}_PACKAGE_NAME})
  set(docdir ${CMAKE_CURRENT_BINARY_DIR}/copyright/${pkg})
  configure_file(${CMAKE_CURRENT_LIST_DIR}/copyright.in ${docdir}/copyright @ONLY)
  file(WRITE ${docdir}/changelog "kuai (${PROJECT_VERSION}) unstable; urgency=medium

  * kuai ${PROJECT_VERSION}, packaged by make deb (CPack).

 -- ${CPACK_PACKAGE_CONTACT}  ${KUAI_DEB_DATE}
")
  execute_process(COMMAND ${KUAI_GZIP} -9n -c ${docdir}/changelog
    OUTPUT_FILE ${docdir}/changelog.gz COMMAND_ERROR_IS_FATAL ANY)
  install(FILES ${docdir}/copyright ${docdir}/changelog.gz
    DESTINATION ${CMAKE_INSTALL_DATAROOTDIR}/doc/${pkg} COMPONENT ${comp} EXCLUDE_FROM_ALL)
endforeach()

include(CPack)
