# schedlab -- the two commands a new user needs:
#   make demo   virtualenv + native build + `schedlab reproduce ktask-nice`
#   make test   the QEMU oracle (once), Rust unit tests + the pytest suite,
#               one validation scenario under QEMU, the wheel installed and
#               used outside the checkout, 60 s of fuzzing, and the
#               instruction-count guard on the engine's speed (what .ci/run runs)
# Needs only Rust (cargo) and Python >= 3.9 with venv; everything else comes
# from PyPI into .venv, and (make oracle-setup) from the system's Debian/Ubuntu
# apt archive into .oracle/.

PYTHON ?= python3
CARGO  ?= cargo
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.schedlab-tools
PIP    := PIP_DISABLE_PIP_VERSION_CHECK=1 $(BIN)/python -m pip

.PHONY: all venv build wheel demo test test-tools fuzz fuzz-quick lint fmt bench bench-check clean distclean runner oracle-setup validate

all: build

# The virtualenv with the build and test tools. Re-made when pyproject.toml changes.
$(STAMP): pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 9) else "schedlab needs Python >= 3.9")'
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV) || { \
	  echo "make: '$(PYTHON) -m venv' failed; on Debian/Ubuntu install the python3-venv package" >&2; exit 1; }
	$(PIP) install --quiet 'maturin>=1.5,<2' pytest pytest-xdist hypothesis ruff mypy perfetto 'tqdm>=4.60' pandas matplotlib pyarrow 'dask[distributed]' \
	  'tomli>=1.1; python_version < "3.11"'
	@touch $@

venv: $(STAMP)

# Editable install: python/schedlab stays the package (so scenarios/ is found
# next to it) and the extension lands beside it as schedlab/_native*.so.
build: $(STAMP)
	VIRTUAL_ENV=$(abspath $(VENV)) $(BIN)/maturin develop --release

# The wheel (target/wheels/): the native module with the real-kernel runner
# built in, and the package data (scenarios, the validation suite, the
# guests' kept reports). `make test` installs it into a throwaway venv
# outside the checkout and uses it there (scripts/wheel-smoke).
wheel: $(STAMP)
	VIRTUAL_ENV=$(abspath $(VENV)) $(BIN)/maturin build --release --out target/wheels

demo: build
	$(BIN)/schedlab reproduce ktask-nice

# schedlab-python is a cdylib linked against libpython only at import time, so
# its test harness cannot link: the Rust tests live in schedlab-core.
test: build oracle-setup test-tools
	$(CARGO) test -p schedlab-core -p schedlab-runner --profile unit
	$(CARGO) build -p schedlab-runner --release
	SCHEDLAB_REQUIRE_TOOLS=1 $(BIN)/pytest -q -n 2 --dist worksteal -m 'not alone' tests
	SCHEDLAB_REQUIRE_TOOLS=1 $(BIN)/pytest -q -m alone tests
	$(MAKE) wheel
	$(BIN)/python scripts/wheel-smoke --wheel-dir target/wheels
	$(MAKE) -j2 fuzz-quick bench-check

# 15 s of each fuzz target, beside bench-check in `make test`: the fuzzing
# is bounded by wall time and cachegrind counts instructions, so neither's
# verdict moves with the other's load, and the CI run is shorter by the
# smaller of the two.
fuzz-quick:
	$(MAKE) fuzz FUZZ_SECONDS=15

# Coverage-guided fuzzing (scripts/fuzz, libFuzzer on the stable toolchain):
# the scenario parser and compiler, the rt-app JSON reader, the sweep spec, then the whole
# run path, FUZZ_SECONDS each; a crash fails with the input in target/fuzz/artifacts/. `make test`
# runs 15 s of each (60 s in all); a unit slower than FUZZ_TIMEOUT seconds is a failure
# (the slowest seen in a 90-minute campaign: 102 s, in the instrumented build).
FUZZ_SECONDS ?= 300
FUZZ_TIMEOUT ?= 300
fuzz:
	scripts/fuzz scenario $(FUZZ_SECONDS) -timeout=$(FUZZ_TIMEOUT)
	scripts/fuzz rtapp $(FUZZ_SECONDS) -timeout=$(FUZZ_TIMEOUT)
	scripts/fuzz sweep $(FUZZ_SECONDS) -timeout=$(FUZZ_TIMEOUT)
	scripts/fuzz run $(FUZZ_SECONDS) -timeout=$(FUZZ_TIMEOUT)

lint: $(STAMP)
	$(CARGO) fmt --all --check
	PYO3_PYTHON=$(abspath $(BIN)/python) $(CARGO) clippy --workspace --all-targets -- -D warnings
	$(BIN)/ruff check python tests
	$(BIN)/ruff format --check python tests
	$(BIN)/mypy python/schedlab tests

fmt: $(STAMP)
	$(CARGO) fmt --all
	$(BIN)/ruff check --fix python tests
	$(BIN)/ruff format python tests

# The real-kernel runner, statically linked (glibc, crt-static) so it can go
# into an initramfs: target/x86_64-unknown-linux-gnu/release/schedlab-runner.
RUNNER_TARGET := x86_64-unknown-linux-gnu
runner:
	RUSTFLAGS="-C target-feature=+crt-static" $(CARGO) build --release -p schedlab-runner --target $(RUNNER_TARGET)
	@file target/$(RUNNER_TARGET)/release/schedlab-runner | grep -Eq 'statically linked|static-pie linked' || { \
	  echo "make runner: target/$(RUNNER_TARGET)/release/schedlab-runner is not statically linked" >&2; exit 1; }
	@echo "static binary: target/$(RUNNER_TARGET)/release/schedlab-runner"

# The real tools the tests use from the system's apt archive (headless
# Chromium for the HTML reports, trace-cmd for trace.dat, rt-app for the
# exported workloads); installed once,
# as root or through sudo.
test-tools:
	scripts/test-tools

# The QEMU oracle (python/schedlab/qemu/): QEMU 10 and Debian's 6.1, 6.12
# and 6.18 kernels unpacked into .oracle/ (private apt; a second run only verifies).
oracle-setup:
	$(PYTHON) scripts/oracle-setup

# The validation suite (validation/suite.toml) on both oracle kernels: the
# fidelity tables, and validation/results-<kernel>.json. Fails when a row is off.
validate: build oracle-setup runner
	$(BIN)/schedlab validate --kernel 6.1 --json validation/results-6.1.json; s1=$$?; \
	$(BIN)/schedlab validate --kernel 6.12 --json validation/results-6.12.json; s2=$$?; \
	test $$s1 -eq 0 && test $$s2 -eq 0

# Wall times (events per second), then instructions per event (cachegrind;
# stable on a loaded machine, unlike the wall times).
bench:
	$(CARGO) run --release -p schedlab-core --bin schedlab-bench
	scripts/bench-instructions --check

# The guard CI runs: every bench case's instructions per event (cachegrind,
# --quick) against benches/instructions.txt; fails on a case more than 5 %
# over it. A change that is slower on purpose says why in its commit and
# runs scripts/bench-instructions --update.
bench-check: oracle-setup
	scripts/bench-instructions --check

clean:
	$(CARGO) clean
	rm -f python/schedlab/_native*.so python/schedlab/_native*.pyd
	rm -rf .pytest_cache .ruff_cache .mypy_cache

distclean: clean
	rm -rf $(VENV)
