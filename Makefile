# The two commands of the README:
#   make bench   builds, runs the benchmark, prints the table, writes build/bench.json + build/bench.png
#   make test    builds (warnings are errors) and runs every test
BUILD ?= build
JOBS ?= 2
CMAKE_FLAGS ?=
# Turns off OpenSSL's AES-NI paths so its constant-time software AES is the
# yardstick (see ../shared/bench.md); it must be set before libcrypto loads.
OPENSSL_NO_AESNI = ~0x200000200000000

.PHONY: all build test test-portable test-sanitize test-cross bench bench-quick plot install format clean vectors

all: build

build:
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release -DKUAI_WERROR=ON $(CMAKE_FLAGS)
	cmake --build $(BUILD) -j$(JOBS)

# The full suite runs last so that its closing "N passed, N failed" line
# closes the output.
# Where `make vectors` put the third-party vector files, for every suite run
# of `make test` (prerequisites inherit it); expanded after `vectors` ran.
test: export KUAI_CRYPTOGRAPHY_VECTORS = $(shell .venv/bin/python -c 'import cryptography_vectors, os; print(os.path.dirname(cryptography_vectors.__file__))')
test: vectors build test-portable test-sanitize test-cross
	OPENSSL_ia32cap="$(OPENSSL_NO_AESNI)" $(BUILD)/kuai_bench --quick > $(BUILD)/bench-smoke.txt
	@echo "benchmark smoke run ok"
	$(BUILD)/kuai_test

# What a non-x86 build gets: the portable backends alone.
test-portable:
	cmake -S . -B $(BUILD)-portable -DCMAKE_BUILD_TYPE=Release -DKUAI_WERROR=ON -DKUAI_PORTABLE_ONLY=ON
	cmake --build $(BUILD)-portable -j$(JOBS) --target kuai_test
	$(BUILD)-portable/kuai_test -q

# The suite cross-built for ARM64 and LoongArch64 (zig cc from PyPI, static
# musl; toolchain files in cmake/) and run under QEMU user mode, once per
# backend the emulated CPU ("-cpu max") offers; see tests/cross-run.sh.
# Needs qemu-user-static from bookworm-backports (QEMU >= 8 runs LSX).
ZIGLANG_VERSION = 0.14.1
CROSS_ARCHES = aarch64 loongarch64
test-cross: export KUAI_CRYPTOGRAPHY_VECTORS = $(shell .venv/bin/python -c 'import cryptography_vectors, os; print(os.path.dirname(cryptography_vectors.__file__))')
test-cross: vectors
	@.venv/bin/python -c 'import ziglang' 2>/dev/null && \
	  test "$$(.venv/bin/python -m ziglang version)" = $(ZIGLANG_VERSION) || \
	  .venv/bin/pip install -q ziglang==$(ZIGLANG_VERSION)
	set -e; for a in $(CROSS_ARCHES); do \
	  cmake -S . -B $(BUILD)-$$a -DCMAKE_TOOLCHAIN_FILE=cmake/$$a-zig.cmake \
	    -DCMAKE_BUILD_TYPE=Release -DKUAI_WERROR=ON; \
	  cmake --build $(BUILD)-$$a -j$(JOBS) --target kuai_test; \
	done
	@# The architectures run side by side (one emulator each, 2 cores),
	@# each into its log, printed in order afterwards.
	pids=""; for a in $(CROSS_ARCHES); do \
	  tests/cross-run.sh $$a qemu-$$a-static $(BUILD)-$$a/kuai_test \
	    > $(BUILD)-$$a/test-cross.log 2>&1 & pids="$$pids $$!"; \
	done; ok=0; for p in $$pids; do wait $$p || ok=1; done; \
	for a in $(CROSS_ARCHES); do cat $(BUILD)-$$a/test-cross.log; done; exit $$ok

# The whole suite again under AddressSanitizer and UndefinedBehaviorSanitizer.
test-sanitize:
	cmake -S . -B $(BUILD)-sanitize -DCMAKE_BUILD_TYPE=Debug -DKUAI_WERROR=ON -DKUAI_SANITIZE=ON
	cmake --build $(BUILD)-sanitize -j$(JOBS) --target kuai_test
	$(BUILD)-sanitize/kuai_test -q

bench: build
	OPENSSL_ia32cap="$(OPENSSL_NO_AESNI)" $(BUILD)/kuai_bench --json $(BUILD)/bench.json
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
CRYPTOGRAPHY_VECTORS_VERSION = 50.0.2
vectors:
	@test -x .venv/bin/python || python3 -m venv .venv
	@.venv/bin/pip install -q cryptography-vectors==$(CRYPTOGRAPHY_VECTORS_VERSION)

install: build
	cmake --install $(BUILD) $(if $(PREFIX),--prefix $(PREFIX),)

format:
	clang-format -i include/*.h src/*.c src/*.h src/*/*.c src/*/*.h tests/*.c tests/*.h bench/*.c

clean:
	rm -rf $(BUILD) $(BUILD)-portable $(BUILD)-sanitize $(BUILD)-aarch64 $(BUILD)-loongarch64
