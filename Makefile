# perfmon - one non-recursive Makefile.
#
#   make            build the library and the programs
#   make check      install missing dependencies, build with -Werror, run all tests
#   make check SAN=1  the same under AddressSanitizer + UndefinedBehaviorSanitizer
#   make demo       sample the bundled workload and analyse it
#   make bench      benchmarks (not part of check)
#   make install PREFIX=/usr/local DESTDIR=
#   make deps       install missing Debian packages (as root) or print the command

PREFIX   ?= /usr/local
DESTDIR  ?=
CC       ?= cc
SAN      ?= 0
VERSION  := 0.1.0

ifeq ($(SAN),1)
BUILD    ?= build/san
OPT      ?= -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined,float-cast-overflow \
            -fno-sanitize-recover=undefined,float-cast-overflow
SANLD    := -fsanitize=address,undefined,float-cast-overflow
else
BUILD    ?= build/release
OPT      ?= -O2 -g
SANLD    :=
endif

WARN := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wformat=2 \
        -Wcast-qual -Wwrite-strings -Wundef -Wno-format-nonliteral -Wno-format-truncation
CPPFLAGS += -Iinclude -Itests/support -D_GNU_SOURCE -DPM_VERSION='"$(VERSION)"' \
            -DPM_TEMPLATE_DIR='"$(PREFIX)/share/perfmon/templates"'
CFLAGS   ?=
CFLAGS   += -std=gnu11 $(OPT) $(WARN) -fPIC -pthread
LDFLAGS  += $(SANLD) -pthread

DEB_PKGS := build-essential pkg-config libcairo2-dev libhpdf-dev libcjson-dev libhdf5-dev \
            libgsl-dev libcmocka-dev fonts-dejavu-core poppler-utils zlib1g-dev valgrind

# External libraries, resolved only when something needs them (so that
# `make deps` works before they exist).
PKGS      = cairo libcjson gsl hdf5-serial
EXT_CFLAGS = $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
EXT_LIBS   = $(shell pkg-config --libs $(PKGS) 2>/dev/null) -lhpdf -lz -lm
CMOCKA_LIBS = $(shell pkg-config --libs cmocka 2>/dev/null || echo -lcmocka)

# --- sources ---------------------------------------------------------------
LIB_DIRS := common profile sampler analysis render export archive
LIB_SRC  := $(foreach d,$(LIB_DIRS),$(wildcard src/$(d)/*.c))
LIB_OBJ  := $(LIB_SRC:%.c=$(BUILD)/%.o)
LIB      := $(BUILD)/libperfmon.a

PROGRAMS := perfmon-sample perfmon-analyze perfmon-archive
PROG_BIN := $(foreach p,$(PROGRAMS),$(if $(wildcard src/$(p)/main.c),$(BUILD)/bin/$(p)))

TEST_SRC := $(wildcard tests/unit/test_*.c)
TEST_BIN := $(TEST_SRC:tests/unit/%.c=$(BUILD)/tests/%)
SUPPORT_SRC := $(wildcard tests/support/*.c)
SUPPORT_OBJ := $(SUPPORT_SRC:%.c=$(BUILD)/%.o)
BENCH_SRC := $(wildcard bench/*.c)
BENCH_BIN := $(BENCH_SRC:bench/%.c=$(BUILD)/bench/%)
EXAMPLE_BIN := $(BUILD)/examples/matmul-io
SHIM := $(BUILD)/tests/clockstep.so

.PHONY: all check test unit cli deps demo bench install uninstall clean valgrind format \
        check-slurm soak
all: $(LIB) $(PROG_BIN) $(EXAMPLE_BIN)

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	@echo "  CC      $<"
	@$(CC) $(CPPFLAGS) $(CFLAGS) $(EXT_CFLAGS) -MMD -MP -c $< -o $@

$(LIB): $(LIB_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@
	ar rcs $@ $^

# The sampler links libc only (and libm): it runs beside the job.
$(BUILD)/bin/perfmon-sample: $(BUILD)/src/perfmon-sample/main.o $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $^ -o $@ -ldl -lm

$(BUILD)/bin/%: $(BUILD)/src/%/main.o $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $^ -o $@ $(EXT_LIBS) -ldl

$(BUILD)/tests/%: $(BUILD)/tests/unit/%.o $(SUPPORT_OBJ) $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $^ -o $@ $(CMOCKA_LIBS) $(EXT_LIBS) -ldl

$(BUILD)/bench/%: $(BUILD)/bench/%.o $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $^ -o $@ $(EXT_LIBS) -ldl

$(BUILD)/examples/matmul-io: examples/matmul-io.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) $< -o $@ -lm

-include $(shell find build -name '*.d' 2>/dev/null)

# --- dependencies ------------------------------------------------------------
deps:
	@missing=""; for p in $(DEB_PKGS); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -z "$$missing" ]; then exit 0; fi; \
	cmd="apt-get install -y --no-install-recommends$$missing"; \
	if [ "$$(id -u)" = 0 ]; then \
	  echo "perfmon: installing$$missing"; \
	  (apt-get update -qq || true) && DEBIAN_FRONTEND=noninteractive $$cmd >/dev/null; \
	else \
	  echo "perfmon: missing packages; run as root:"; echo "  apt-get update && $$cmd"; exit 1; \
	fi

# --- tests -----------------------------------------------------------------
check: deps
	@$(MAKE) --no-print-directory test

test: all $(TEST_BIN) $(SHIM)
	@BUILD=$(BUILD) SAN=$(SAN) tests/run.sh $(TEST_BIN)

valgrind: deps
	@$(MAKE) --no-print-directory all $(TEST_BIN) $(SHIM)
	@BUILD=$(BUILD) VALGRIND=1 tests/run.sh $(TEST_BIN)

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

format:
	clang-format -i $$(git ls-files '*.c' '*.h')

clean:
	rm -rf build
