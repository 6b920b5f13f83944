# s2mc — the README's two commands are `make demo` and `make test`; both run `make setup` first.
SHELL := /bin/bash
VENV  ?= .venv
PY    := $(VENV)/bin/python
PIP   := $(PY) -m pip
SUDO  := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

# Debian packages the project needs: toolchain, SystemC, OpenSSL headers, OpenMP, Python headers,
# Chromium (the tests render the report and the timeline page in it, headless), the OpenCL loader,
# headers and PoCL (the OpenCL backend runs on the CPU through PoCL where there is no GPU's OpenCL),
# chromedriver (the browser tests of `s2mc serve` drive Chromium with selenium) and CodeMirror
# (the editor of the serve page, which it serves from /usr/share/javascript).
APT_PACKAGES := build-essential g++ cmake ninja-build pkg-config python3-dev python3-venv \
                libsystemc-dev libssl-dev libomp-dev openssl chromium \
                ocl-icd-opencl-dev opencl-headers pocl-opencl-icd clinfo \
                chromium-driver libjs-codemirror postgresql
PY_DEPS := scikit-build-core pybind11 click tqdm pandas pyarrow matplotlib cryptography \
           pytest pytest-xdist hypothesis pexpect vcdvcd dask distributed nbformat nbclient ipykernel \
           fastapi uvicorn psutil sqlalchemy 'psycopg[binary]' httpx2 selenium

# Everything the build reads: when one changes, the package is rebuilt (incrementally).
SOURCES := $(shell find common isa compiler simulator workloads gpu-backends analysis experiments server cli \
             -type f \( -name '*.py' -o -name '*.cpp' -o -name '*.h' -o -name '*.hpp' -o -name '*.cu' -o -name '*.cuh' \
             -o -name 'CMakeLists.txt' -o -name '*.s' -o -name '*.rz' -o -name '*.csv' -o -name '*.json' -o -name '*.toml' \
             -o -name '*.html' -o -name '*.cl' -o -name '*.js' -o -name '*.css' \) 2>/dev/null) \
           CMakeLists.txt pyproject.toml

.PHONY: setup test test-all demo bench report clean
setup: $(VENV)/.installed

# The package lists are in this file: a change to it installs what is new.
$(VENV)/.apt: Makefile
	@missing=$$(for p in $(APT_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || echo $$p; done); \
	if [ -n "$$missing" ]; then \
	  echo "make setup: installing Debian packages:" $$missing; \
	  $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $$missing; \
	fi
	@[ -x $(PY) ] || python3 -m venv $(VENV)
	@touch $@

$(VENV)/.pydeps: $(VENV)/.apt pyproject.toml Makefile
	$(PIP) install -q --disable-pip-version-check $(PY_DEPS)
	@touch $@

# A regular (not editable) install: site-packages/s2mc/<name>/ mirrors the folder <name>/ exactly, so
# every module has one name and one file. Any source change reinstalls; CMake rebuilds incrementally.
# pip's verbose output is the C++ build's: build/install.log keeps all of it, and tools/build_progress.py
# shows its stages and ninja's steps, so the first build (minutes) is not silent; a failure shows the
# log's end.
$(VENV)/.installed: $(VENV)/.pydeps $(SOURCES)
	@mkdir -p build
	@echo "make setup: building and installing s2mc (build/install.log; the first C++ build takes minutes)"
	@set -o pipefail; flock build/.install.lock $(PIP) install -v --disable-pip-version-check --no-build-isolation \
	  --no-deps . 2>&1 | $(PY) tools/build_progress.py build/install.log \
	  || { tail -n 40 build/install.log; echo "make setup: the install failed; all of it: build/install.log"; exit 1; }
	@touch $@

test: setup
	$(PY) -m pytest -n 2 -q

test-all: setup
	$(PY) -m pytest -n 2 -q -m "slow or not slow"

demo: setup
	$(VENV)/bin/s2mc demo

bench: setup
	@for b in $$(ls bench/bench_*.py); do echo "== $$b"; $(PY) $$b || exit 1; done

report: setup
	$(VENV)/bin/s2mc report results --out report

clean:
	rm -rf build $(VENV) .pytest_cache report results *.egg-info
	find . -name __pycache__ -prune -exec rm -rf {} +
