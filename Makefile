# flood: a fake fediverse in one C process.
#   make            build build/flood
#   make check      install what is missing, then every test (plain and sanitized)
#   make demo       install what is missing, then a short load run end to end
#   make bench      benchmarks, printed as ratios against references run alongside
#   make stress     every suite many times in a random order on loaded cores: any flake?
#   make fuzz       every fuzz harness for FUZZ_SECONDS (default 60) each
#   make soak       an hour (SOAK_SECONDS) of signed load against the reference target with
#                   faults switched on and off: does flood's memory, descriptors or lag drift?
#   make format     reformat with clang-format; make format-check only checks
#   make deps-check the architecture's order: includes (sign/ <- webfinger/ <- flood/ rooms)
#                   and no two files calling each other; no file over 850 lines, no
#                   function over 150 (scripts/size_check.py)
#   make SANITIZE=address,undefined   a sanitized build in build-san/

CC      ?= cc
PREFIX  ?= /usr/local
PKGS    := libmicrohttpd gnutls openssl jansson libcurl libevent libevent_pthreads libevent_openssl ldns hiredis
VERSION := $(shell cat VERSION 2>/dev/null || echo 0.0.0)

ifeq ($(SANITIZE),)
BUILD   ?= build
SANFLAGS :=
else
BUILD   ?= build-san
SANFLAGS := -fsanitize=$(SANITIZE) -fno-omit-frame-pointer -fno-sanitize-recover=all
endif

WARN    := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wformat=2 -Wno-format-nonliteral
OPT     ?= -O2 -g
CPPFLAGS += -D_GNU_SOURCE -DFLOOD_VERSION='"$(VERSION)"' -I.
CFLAGS  += -std=c11 $(OPT) $(WARN) $(SANFLAGS) -pthread $(shell pkg-config --cflags $(PKGS))
LDLIBS  += $(shell pkg-config --libs $(PKGS)) -lhttp_parser -pthread -lm
LDFLAGS += $(SANFLAGS)

# Modules are folders; every .c in them is part of the library. flood/ is rooms, one folder
# deep (docs/ARCHITECTURE.md); flood/main.c is the program.
SIGN_OBJ := $(patsubst %.c,$(BUILD)/obj/%.o,$(sort $(wildcard sign/*.c)))
WF_OBJ   := $(patsubst %.c,$(BUILD)/obj/%.o,$(sort $(wildcard webfinger/*.c)))
DAEMON_OBJ := $(patsubst %.c,$(BUILD)/obj/%.o,$(sort $(wildcard flood/*/*.c)))
LIB_OBJ  := $(SIGN_OBJ) $(WF_OBJ) $(DAEMON_OBJ)
TEST_SRC := $(sort $(wildcard tests/unit/test_*.c))
TEST_BIN := $(TEST_SRC:tests/unit/%.c=$(BUILD)/tests/%)
TOOL_SRC := $(sort $(wildcard tests/tools/*.c))
TOOL_BIN := $(TOOL_SRC:tests/tools/%.c=$(BUILD)/tools/%)

all: $(BUILD)/flood $(TEST_BIN) $(TOOL_BIN)

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -MMD -MP -c $< -o $@

# Three archives, so a module's unit tests link only what they test:
# test_sign* needs sign/ alone, test_wf* sign/ and webfinger/, every other test all of it.
$(BUILD)/libsign.a: $(SIGN_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(BUILD)/libwf.a: $(WF_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(BUILD)/libflood.a: $(DAEMON_OBJ)
	@rm -f $@
	ar rcs $@ $^

ALL_LIBS := $(BUILD)/libflood.a $(BUILD)/libwf.a $(BUILD)/libsign.a

$(BUILD)/flood: $(BUILD)/obj/flood/main.o $(ALL_LIBS)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/tests/test_sign%: $(BUILD)/obj/tests/unit/test_sign%.o $(BUILD)/libsign.a
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/tests/test_wf%: $(BUILD)/obj/tests/unit/test_wf%.o $(BUILD)/libwf.a $(BUILD)/libsign.a
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/tests/%: $(BUILD)/obj/tests/unit/%.o $(ALL_LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/tools/%: $(BUILD)/obj/tests/tools/%.o $(ALL_LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

deps:
	@scripts/deps.sh

# The unit and integration suites, plain and then under ASan+UBSan, one closing line.
check: deps
	@scripts/check.sh

# Only the tests, with no dependency step (for a machine already set up).
test: all
	@scripts/check.sh --no-deps

demo: deps all
	@scripts/demo.sh

bench: deps all
	@scripts/bench.sh

# The include order of docs/ARCHITECTURE.md, no circles between files, and the size rule
# (also a suite of make check: tests/integration/deps_check.sh).
deps-check: all
	@scripts/deps_check.sh && python3 scripts/calls_check.py $(BUILD) && python3 scripts/size_check.py

# Unit binaries 20 times, integration suites 3 times, shuffled, beside busy loops
# (STRESS_SEED=N replays an order; scripts/stress.sh --san for the sanitized build).
stress: deps all
	@scripts/stress.sh

FUZZ_SECONDS ?= 60
fuzz: deps
	@scripts/fuzz.sh $(FUZZ_SECONDS)

# Not part of check or CI: an hour by default (scripts/soak.sh lists its SOAK_* settings).
soak: deps all
	@scripts/soak.sh

FORMAT_SRC = $(shell git ls-files --cached --others --exclude-standard '*.c' '*.h' 2>/dev/null)
format:
	clang-format -i $(FORMAT_SRC)

format-check:
	@clang-format --dry-run -Werror $(FORMAT_SRC) && echo "format: clean"

install: $(BUILD)/flood
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man1
	install -m 0755 $(BUILD)/flood $(DESTDIR)$(PREFIX)/bin/flood
	if [ -f docs/flood.1 ]; then install -m 0644 docs/flood.1 $(DESTDIR)$(PREFIX)/share/man/man1/flood.1; fi
	install -d $(DESTDIR)$(PREFIX)/share/flood/presets
	install -m 0644 $(wildcard fixtures/presets/*) $(DESTDIR)$(PREFIX)/share/flood/presets/

clean:
	rm -rf build build-san build-fuzz

.PHONY: all deps check test demo bench stress fuzz soak format format-check deps-check install clean
.SECONDARY:

-include $(LIB_OBJ:.o=.d) $(BUILD)/obj/flood/main.d $(TEST_SRC:tests/unit/%.c=$(BUILD)/obj/tests/unit/%.d) \
	$(TOOL_SRC:tests/tools/%.c=$(BUILD)/obj/tests/tools/%.d)
