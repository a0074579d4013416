# perfmon - one non-recursive Makefile.
#
#   make            build the library and the programs (warnings shown, not fatal)
#   make check      install missing dependencies, build with -Werror, run all tests
#   make test       the same without the dependency check (-Werror too)
#   make check SAN=1  the same under AddressSanitizer + UndefinedBehaviorSanitizer
#   make DEBUG=1    -O0 with the invariants checked (PM_ASSERT, as SAN=1 does)
#   make demo       sample the bundled workload and analyse it
#   make bench      benchmarks (not part of check)
#   make html-ref   capture the HTML report's reference images again (a meant change of its look)
#   make fmt-sweep  the number formatter against printf on 50 million values
#   make fuzz       every libFuzzer target in tests/fuzz/ for FUZZ_SECONDS each (clang)
#   make fuzz-ci    the same, briefly (FUZZ_CI_SECONDS each)
#   make install PREFIX=/usr/local DESTDIR=
#   make deps       install missing Debian packages (as root) or print the command
#   make MPI=0      build perfmon-analyze without MPI even where mpicc is found
#   make format     clang-format (14, .clang-format) every tracked .c and .h file
#   make format-check  list the tracked .c and .h files that `make format` would change

PREFIX   ?= /usr/local
DESTDIR  ?=
CC       ?= cc
SAN      ?= 0
DEBUG    ?= 0
VERSION  := 0.1.0

ifeq ($(SAN),1)
BUILD    ?= build/san
OPT      ?= -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined,float-cast-overflow \
            -fno-sanitize-recover=undefined,float-cast-overflow -DPM_DEBUG
SANLD    := -fsanitize=address,undefined,float-cast-overflow
else ifeq ($(DEBUG),1)
BUILD    ?= build/debug
OPT      ?= -O0 -g -DPM_DEBUG
SANLD    :=
else
BUILD    ?= build/release
OPT      ?= -O2 -g
SANLD    :=
endif

# -Werror only where the build is a test (check, test, valgrind, CI): a
# user's `make` with a newer compiler shows its new warnings and goes on.
WERROR   ?=
WARN  = -Wall -Wextra $(WERROR) -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wformat=2 \
        -Wcast-qual -Wwrite-strings -Wundef -Wno-format-nonliteral -Wno-format-truncation
CPPFLAGS += -Iinclude -D_GNU_SOURCE -DPM_VERSION='"$(VERSION)"' \
            -DPM_TEMPLATE_DIR='"$(PREFIX)/share/perfmon/templates"'
CFLAGS   ?=
CFLAGS   += -std=gnu11 $(OPT) $(WARN) -fPIC -pthread
LDFLAGS  += $(SANLD) -pthread

# What the build needs, then what only some tests use (each such test says
# SKIP and why when its tool is missing; `make valgrind` needs valgrind).
DEB_BUILD_PKGS := build-essential pkg-config libcairo2-dev libhpdf-dev libcjson-dev libhdf5-dev \
            libgsl-dev libcmocka-dev fonts-dejavu-core zlib1g-dev libsqlite3-dev libpq-dev
DEB_TEST_PKGS := poppler-utils postgresql gnuplot-nox valgrind qpdf libopenmpi-dev openmpi-bin \
            hdf5-tools chromium
DEB_PKGS := $(DEB_BUILD_PKGS) $(DEB_TEST_PKGS)

# External libraries, resolved only when something needs them (so that
# `make deps` works before they exist).
PKGS      = cairo libcjson gsl
EXT_CFLAGS = $(shell pkg-config --cflags $(PKGS) hdf5-serial 2>/dev/null)
EXT_LIBS   = $(shell pkg-config --libs $(PKGS) 2>/dev/null) -lhpdf -lz -lm
# HDF5 is opened with dlopen by --hdf5 (src/export/hdf5.c), not linked: with
# what it pulls in it adds some 7 MB to every perfmon-analyze run.  Only the
# tests that read HDF5 files back link it.
HDF5_LIBS  = $(shell pkg-config --libs hdf5-serial 2>/dev/null)
HDF5_SONAME = $(shell f=$$(pkg-config --variable=libdir hdf5-serial 2>/dev/null)/libhdf5.so; \
  objdump -p "$$f" 2>/dev/null | awk '$$1 == "SONAME" {print $$2}')
CMOCKA_LIBS = $(shell pkg-config --libs cmocka 2>/dev/null || echo -lcmocka)
# The archive's databases: only perfmon-archive and its tests link them.
ARCHIVE_CFLAGS = $(shell pkg-config --cflags sqlite3 libpq 2>/dev/null)
ARCHIVE_LIBS   = $(shell pkg-config --libs sqlite3 libpq 2>/dev/null || echo -lsqlite3 -lpq)

# MPI (docs/analysis.md, "MPI"): perfmon-analyze reads its inputs on the
# ranks of `mpirun -n N` when it is built with mpicc's flags; MPI=0 (or no
# mpicc) builds it as before.  Only its main.c and mpi.c see MPI.
MPI ?= $(if $(shell command -v mpicc 2>/dev/null),1,0)
ifeq ($(MPI),1)
MPI_CFLAGS = $(patsubst -I%,-isystem %,$(shell mpicc --showme:compile 2>/dev/null)) -DPM_HAVE_MPI
MPI_LIBS   = $(shell mpicc --showme:link 2>/dev/null)
else
MPI_CFLAGS =
MPI_LIBS   =
endif

# --- sources ---------------------------------------------------------------
LIB_DIRS := common profile sampler input analysis render export archive
LIB_SRC  := $(foreach d,$(LIB_DIRS),$(wildcard src/$(d)/*.c))
LIB_OBJ  := $(LIB_SRC:%.c=$(BUILD)/%.o)
LIB      := $(BUILD)/libperfmon.a

PROGRAMS := perfmon-sample perfmon-analyze perfmon-archive
# Each program's driver (its command line) lives beside its main.c, above
# the library; the tests that call a driver link this archive too.
CLI_SRC  := $(filter-out %/main.c %/mpi.c,$(foreach p,$(PROGRAMS),$(wildcard src/$(p)/*.c)))
CLI_OBJ  := $(CLI_SRC:%.c=$(BUILD)/%.o)
CLI_LIB  := $(BUILD)/libperfmon-cli.a
PROG_BIN := $(foreach p,$(PROGRAMS),$(if $(wildcard src/$(p)/main.c),$(BUILD)/bin/$(p)))

TEST_SRC := $(wildcard tests/unit/test_*.c)
TEST_BIN := $(TEST_SRC:tests/unit/%.c=$(BUILD)/tests/%)
SUPPORT_SRC := $(wildcard tests/support/*.c)
SUPPORT_OBJ := $(SUPPORT_SRC:%.c=$(BUILD)/%.o)
BENCH_SRC := $(wildcard bench/*.c)
BENCH_BIN := $(BENCH_SRC:bench/%.c=$(BUILD)/bench/%)
EXAMPLE_BIN := $(BUILD)/examples/matmul-io $(BUILD)/examples/tree-workload
# Fuzz targets: every tests/fuzz/fuzz_<name>.c, seeds in fixtures/fuzz/<name>/.
FUZZ_SRC   := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_NAMES := $(FUZZ_SRC:tests/fuzz/fuzz_%.c=%)
REPLAY_BIN := $(FUZZ_NAMES:%=$(BUILD)/fuzz-replay/replay_%)

SHIM := $(BUILD)/tests/clockstep.so

.PHONY: all check test deps demo bench html-ref fmt-sweep install uninstall clean valgrind format format-check \
        fuzz fuzz-ci fuzz-build fuzz-merge check-slurm soak
all: $(LIB) $(CLI_LIB) $(PROG_BIN) $(EXAMPLE_BIN)

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	@echo "  CC      $<"
	@$(CC) $(CPPFLAGS) $(TEST_CPPFLAGS) $(CFLAGS) $(EXT_CFLAGS) $(ARCHIVE_CFLAGS) -MMD -MP -c $< -o $@

# Only the tests see tests/support (testutil.h): the library and the
# programs must not depend on it.
$(BUILD)/tests/%.o: TEST_CPPFLAGS := -Itests/support

$(BUILD)/src/export/hdf5.o: CPPFLAGS += $(if $(HDF5_SONAME),-DPM_HDF5_LIB='"$(HDF5_SONAME)"')

$(LIB): $(LIB_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@
	ar rcs $@ $^

$(CLI_LIB): $(CLI_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@
	ar rcs $@ $^

# The sampler links libc only (libm only if a source ever needs it): it runs
# beside the job, and every shared library it maps adds to its resident size.
$(BUILD)/bin/perfmon-sample: $(BUILD)/src/perfmon-sample/main.o $(CLI_LIB) $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $^ -o $@ -Wl,--as-needed -ldl -lm

# A change of MPI= rebuilds what it decides.
MPI_FLAG := $(BUILD)/mpi.flag
$(shell mkdir -p $(BUILD) && (echo '$(MPI) $(MPI_CFLAGS)' | cmp -s - $(MPI_FLAG) || \
  echo '$(MPI) $(MPI_CFLAGS)' > $(MPI_FLAG)))
$(BUILD)/src/perfmon-analyze/mpi.o: CPPFLAGS += $(MPI_CFLAGS)
$(BUILD)/src/perfmon-analyze/mpi.o: $(MPI_FLAG)

$(BUILD)/bin/perfmon-analyze: $(BUILD)/src/perfmon-analyze/main.o \
  $(BUILD)/src/perfmon-analyze/mpi.o $(CLI_LIB) $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $^ -o $@ $(EXT_LIBS) $(MPI_LIBS) -ldl

$(BUILD)/bin/perfmon-archive: $(BUILD)/src/perfmon-archive/main.o $(CLI_LIB) $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $^ -o $@ $(EXT_LIBS) $(ARCHIVE_LIBS) -ldl

$(BUILD)/tests/test_archive%: $(BUILD)/tests/unit/test_archive%.o $(SUPPORT_OBJ) $(CLI_LIB) $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $^ -o $@ $(CMOCKA_LIBS) $(EXT_LIBS) $(HDF5_LIBS) $(ARCHIVE_LIBS) -ldl

$(BUILD)/bin/%: $(BUILD)/src/%/main.o $(CLI_LIB) $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $^ -o $@ $(EXT_LIBS) -ldl

$(BUILD)/tests/%: $(BUILD)/tests/unit/%.o $(SUPPORT_OBJ) $(CLI_LIB) $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $^ -o $@ $(CMOCKA_LIBS) $(EXT_LIBS) $(HDF5_LIBS) -ldl

# The stand-in NVML library that the GPU tests load through PERFMON_NVML_LIB;
# no sanitizer flags: it is dlopen'ed into (possibly sanitized) programs.
NVML_STUB := $(BUILD)/tests/libnvml_stub.so
$(NVML_STUB): tests/stub/nvml_stub.c src/sampler/nvml_api.h
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -O2 -g $(WARN) -fPIC -shared -Isrc/sampler $< -o $@
DCGM_STUB := $(BUILD)/tests/libdcgm_stub.so
$(DCGM_STUB): tests/stub/dcgm_stub.c src/sampler/dcgm_api.h
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -O2 -g $(WARN) -fPIC -shared -Isrc/sampler $< -o $@

# The gate's rates simulate histories with the tests' noise model.
$(BUILD)/bench/gate_rates: $(BUILD)/bench/gate_rates.o $(BUILD)/tests/support/gate_sim.o \
  $(BUILD)/tests/support/gate_noise.o $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $^ -o $@ $(EXT_LIBS) -ldl

# The benchmarks generate their inputs with the tests' synthetic profiles.
$(BUILD)/bench/%: $(BUILD)/bench/%.o $(BUILD)/tests/support/synth.o $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $^ -o $@ $(EXT_LIBS) -ldl

$(BUILD)/examples/matmul-io: examples/matmul-io.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) $< -o $@ -lm

# No sanitizer flags: the workload's own exit must not add CPU time (a leak
# check) after it logged its final accounting (tests/cli/proctree_accounting.sh).
$(BUILD)/examples/tree-workload: examples/tree-workload.c
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -O2 -g $(WARN) $< -o $@ -pthread

-include $(shell find build -name '*.d' 2>/dev/null)

# --- dependencies ------------------------------------------------------------
deps:
	@if ! command -v dpkg-query >/dev/null 2>&1; then \
	  echo "perfmon: not a Debian system; the build needs the equivalents of: $(DEB_BUILD_PKGS)"; \
	  echo "perfmon: and some tests use: $(DEB_TEST_PKGS)"; exit 0; fi; \
	missing=""; optional=""; for p in $(DEB_PKGS); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" && continue; \
	  case " $(DEB_BUILD_PKGS) " in *" $$p "*) missing="$$missing $$p";; *) optional="$$optional $$p";; esac; \
	done; \
	if [ -z "$$missing$$optional" ]; then exit 0; fi; \
	cmd="apt-get install -y --no-install-recommends$$missing$$optional"; \
	if [ "$$(id -u)" = 0 ]; then \
	  echo "perfmon: installing$$missing$$optional"; \
	  (apt-get update -qq || true) && DEBIAN_FRONTEND=noninteractive $$cmd >/dev/null; \
	elif [ -n "$$missing" ]; then \
	  echo "perfmon: missing packages; run as root:"; echo "  apt-get update && $$cmd"; exit 1; \
	else \
	  echo "perfmon: not root: optional packages not installed:$$optional"; \
	  echo "perfmon: the tests that need them are skipped; to install them, as root:"; \
	  echo "  apt-get update && $$cmd"; \
	fi

# --- tests -----------------------------------------------------------------
check: deps
	@$(MAKE) --no-print-directory test

# A target-specific variable reaches every prerequisite built for it (a
# recursive make gets it on its command line, as valgrind's does).  The
# benches are built too, not run: a change that breaks one shows here.
test: WERROR := -Werror
test: all $(TEST_BIN) $(NVML_STUB) $(DCGM_STUB) $(REPLAY_BIN) $(SHIM) $(BENCH_BIN)
	@BUILD=$(BUILD) SAN=$(SAN) tests/run.sh $(TEST_BIN)

valgrind: deps
	@$(MAKE) --no-print-directory all $(TEST_BIN) $(NVML_STUB) $(DCGM_STUB) $(REPLAY_BIN) $(SHIM) WERROR=-Werror
	@BUILD=$(BUILD) VALGRIND=1 tests/run.sh $(TEST_BIN)

# --- fuzzing (docs/testing.md, "Fuzzing") -----------------------------------
# Replay drivers: each target with tests/fuzz/replay_main.c, built by $(CC)
# like the tests (SAN=1 included); tests/cli/fuzz_replay.sh runs them over
# fixtures/fuzz/<name>/ and fixtures/fuzz/crashes/<name>/.
$(BUILD)/fuzz-replay/replay_%: $(BUILD)/tests/fuzz/fuzz_%.o $(BUILD)/tests/fuzz/replay_main.o $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $^ -o $@ $(EXT_LIBS) -ldl

# libFuzzer builds: the library again with clang and coverage, per target.
FUZZ_CC      ?= $(shell command -v clang-14 2>/dev/null || command -v clang 2>/dev/null || echo clang)
FUZZ_SECONDS ?= 60
FUZZ_CI_SECONDS ?= 20
FUZZ_BUILD   := build/fuzz
FUZZ_CFLAGS  := -std=gnu11 -g -O1 -fno-omit-frame-pointer -pthread \
                -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined
FUZZ_LIB_OBJ := $(LIB_SRC:%.c=$(FUZZ_BUILD)/%.o)
FUZZ_BIN     := $(FUZZ_NAMES:%=$(FUZZ_BUILD)/fuzz_%)

$(FUZZ_BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	@echo "  FUZZCC  $<"
	@$(FUZZ_CC) $(CPPFLAGS) $(FUZZ_CFLAGS) $(EXT_CFLAGS) $(ARCHIVE_CFLAGS) -MMD -MP -c $< -o $@

$(FUZZ_BUILD)/libperfmon.a: $(FUZZ_LIB_OBJ)
	rm -f $@
	ar rcs $@ $^

$(FUZZ_BUILD)/fuzz_%: tests/fuzz/fuzz_%.c $(FUZZ_BUILD)/libperfmon.a
	$(FUZZ_CC) $(CPPFLAGS) $(subst fuzzer-no-link,fuzzer,$(FUZZ_CFLAGS)) $(EXT_CFLAGS) $< \
	  $(FUZZ_BUILD)/libperfmon.a -o $@ $(EXT_LIBS) $(ARCHIVE_LIBS) -ldl

fuzz-build: $(FUZZ_BIN)

# Each target in turn: the working corpus in build/fuzz/corpus/<name>
# (new inputs go there), the committed seeds read too; a crash lands in
# fixtures/fuzz/crashes/<name>/ to be kept as a regression input.
FUZZ_DEB_PKGS := $(DEB_PKGS) clang-14 libclang-rt-14-dev

fuzz:
	@$(MAKE) --no-print-directory deps DEB_PKGS="$(FUZZ_DEB_PKGS)"
	@$(MAKE) --no-print-directory fuzz-build
	@BUILD=$(BUILD) FUZZ_BUILD=$(FUZZ_BUILD) tests/fuzz/run.sh $(FUZZ_SECONDS) $(FUZZ_NAMES)

fuzz-ci:
	@$(MAKE) --no-print-directory deps DEB_PKGS="$(FUZZ_DEB_PKGS)"
	@$(MAKE) --no-print-directory fuzz-build
	@BUILD=$(BUILD) FUZZ_BUILD=$(FUZZ_BUILD) tests/fuzz/run.sh $(FUZZ_CI_SECONDS) $(FUZZ_NAMES)

# Fold the working corpora into the committed seeds: only inputs that add
# coverage are copied (libFuzzer -merge=1).
fuzz-merge: fuzz-build
	@for n in $(FUZZ_NAMES); do mkdir -p fixtures/fuzz/$$n $(FUZZ_BUILD)/corpus/$$n; \
	  $(FUZZ_BUILD)/fuzz_$$n -merge=1 fixtures/fuzz/$$n $(FUZZ_BUILD)/corpus/$$n 2>&1 | \
	  grep -E '^MERGE-OUTER: [0-9]+ new files' | sed "s/^/$$n: /"; done

# An LD_PRELOAD shim that steps one process's wall clock (the sampler's
# clock-step test); built without sanitizers, outside the library.
$(SHIM): tests/shim/clockstep.c
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -O2 $(WARN) -fPIC -shared $< -o $@ -ldl

# A real SLURM on this machine (installs slurmd, slurmctld, munge) and the
# sampler soak (SOAK_SECONDS, default an hour); neither is part of check.
check-slurm: deps
	@$(MAKE) --no-print-directory all
	@BUILD=$(BUILD) tests/slurm/run.sh

soak: deps
	@$(MAKE) --no-print-directory all
	@BUILD=$(BUILD) bench/soak.sh

# The formatter of --data and --csv against printf on 50 million values
# (test_fmt runs a million in make check).
fmt-sweep: $(BUILD)/tests/test_fmt
	@PM_FMT_VALUES=$${PM_FMT_VALUES:-50000000} $(BUILD)/tests/test_fmt

# --- the HTML report's reference images ---------------------------------------
# When a change to the HTML report's look is meant: capture its sections
# again in headless Chromium into fixtures/golden/html/ (tests/cli/html_shots.sh).
html-ref: all
	@PM_HTML_REF_UPDATE=1 PM_BIN=$(abspath $(BUILD))/bin PM_BUILD=$(abspath $(BUILD)) \
	  PM_ROOT=$(CURDIR) PM_WRAP= sh tests/cli/html_shots.sh

# --- demo and benchmarks -----------------------------------------------------
demo: deps
	@$(MAKE) --no-print-directory all
	@BUILD=$(BUILD) examples/demo.sh

bench: deps
	@$(MAKE) --no-print-directory all $(BENCH_BIN)
	@BUILD=$(BUILD) bench/run.sh

# --- install -----------------------------------------------------------------
install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/perfmon/templates \
	  $(DESTDIR)$(PREFIX)/share/man/man1
	install -m 755 $(PROG_BIN) $(DESTDIR)$(PREFIX)/bin/
	cp -R templates/. $(DESTDIR)$(PREFIX)/share/perfmon/templates/
	install -m 644 docs/man/*.1 $(DESTDIR)$(PREFIX)/share/man/man1/

uninstall:
	rm -f $(foreach p,$(PROGRAMS),$(DESTDIR)$(PREFIX)/bin/$(p)) \
	  $(foreach p,$(PROGRAMS),$(DESTDIR)$(PREFIX)/share/man/man1/$(p).1)
	rm -rf $(DESTDIR)$(PREFIX)/share/perfmon

# The style is .clang-format, tuned on clang-format 14 (Debian bookworm's);
# another version may format some lines differently.
CLANG_FORMAT ?= clang-format
FORMAT_FILES = $(shell git ls-files '*.c' '*.h' 2>/dev/null)

format:
	@$(MAKE) --no-print-directory deps DEB_BUILD_PKGS= DEB_PKGS=clang-format DEB_TEST_PKGS=clang-format
	$(CLANG_FORMAT) -i $(FORMAT_FILES)

# Lists each file whose clang-format output differs, with the number of
# lines that would change; fails if there is one.
format-check:
	@$(MAKE) --no-print-directory deps DEB_BUILD_PKGS= DEB_PKGS=clang-format DEB_TEST_PKGS=clang-format
	@command -v $(CLANG_FORMAT) >/dev/null 2>&1 || { echo "perfmon: $(CLANG_FORMAT) not found"; exit 1; }; \
	bad=0; lines=0; for f in $(FORMAT_FILES); do \
	  d=$$($(CLANG_FORMAT) "$$f" | diff "$$f" -); \
	  if [ -n "$$d" ]; then n=$$(printf '%s\n' "$$d" | grep -c '^<'); \
	    echo "  not formatted: $$f ($$n lines)"; bad=$$((bad + 1)); lines=$$((lines + n)); fi; \
	done; \
	if [ "$$bad" != 0 ]; then echo "format-check: $$bad files, $$lines lines differ from clang-format; run make format"; exit 1; fi; \
	echo "format-check: all $(words $(FORMAT_FILES)) files formatted"

clean:
	rm -rf build
