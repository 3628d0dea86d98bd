# Keiri Studio — every command a contributor needs. The README shows the two that matter:
#   make studio   set up what is missing, build, open the window
#   make test     set up what is missing, run every check (what CI runs)

SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

CARGO ?= cargo
NPM ?= npm
# Where cargo puts binaries (honours CARGO_TARGET_DIR).
TARGET_DIR := $(or $(CARGO_TARGET_DIR),$(CURDIR)/target)
export CARGO_TERM_COLOR ?= never

.PHONY: help setup setup-system setup-npm setup-models ui build studio test fmt fmt-check lint \
        test-rust test-ui test-e2e test-desktop test-toon bench bench-cold-start clean

help:
	@echo "make studio   build and open the desktop window (sets up what is missing)"
	@echo "make test     run every check: fmt, clippy, Rust tests, UI unit + e2e tests"
	@echo "make serve    run the studio in a browser at http://127.0.0.1:8710"
	@echo "make bench    run the benchmarks"
	@echo "make eval-planner  evaluate the planner on evals/planner_cases.yaml (needs an LLM)"

## --- setup: each step installs only what is missing ------------------------------------
setup: setup-system setup-npm setup-models

setup-system:
	@bash scripts/setup-system.sh

# `npm install`, not `npm ci`: npm leaves the Tauri CLI's other-platform optional packages out
# of a lockfile written on Linux, and `npm ci` then refuses the lockfile as out of sync.
node_modules/.package-lock.json: package-lock.json package.json ui/package.json
	$(NPM) install --no-audit --no-fund --loglevel=error
	@touch $@

setup-npm: node_modules/.package-lock.json

setup-models:
	@bash scripts/fetch-models.sh

## --- build -------------------------------------------------------------------------------
ui: setup-npm
	$(NPM) run build --workspace ui

build: ui
	$(CARGO) build -p keiri-cli

studio: setup ui
	$(CARGO) build -p keiri-studio
	@if [ -z "$${DISPLAY:-}$${WAYLAND_DISPLAY:-}" ]; then \
	  echo "No display found: run it under Xvfb with"; \
	  echo "  xvfb-run -a -s '-screen 0 1280x800x24' $(TARGET_DIR)/debug/keiri-studio"; \
	else \
	  KEIRI_WORKSPACE="$${KEIRI_WORKSPACE:-$(CURDIR)}" $(TARGET_DIR)/debug/keiri-studio; \
	fi

serve: build
	$(TARGET_DIR)/debug/keiri serve --workspace . --ui-dir ui/dist

## --- checks ------------------------------------------------------------------------------
fmt:
	$(CARGO) fmt --all

fmt-check:
	$(CARGO) fmt --all -- --check

lint: ui
	$(CARGO) clippy --workspace --all-targets -- -D warnings

test-rust: ui
	$(CARGO) nextest run --workspace --no-fail-fast

test-ui: setup-npm
	$(NPM) run test:unit --workspace ui

# Alone, test-e2e builds `keiri`. Inside `make test` it reuses the binary test-rust has just
# built: nextest's build enables dev-only features, so `cargo build` would compile it again
# (about six minutes on a clean CI machine) for the same code.
E2E_BUILD ?= 1
test-e2e: ui
	$(if $(filter 1,$(E2E_BUILD)),$(CARGO) build -p keiri-cli)
	KEIRI_BIN="$(TARGET_DIR)/debug/keiri" $(NPM) run test:e2e --workspace ui

test: E2E_BUILD = 0
# The real desktop window under Xvfb, driven by tauri-driver + WebKitWebDriver. The binary
# embeds the freshly built ui/dist (the default `custom-protocol` feature), like a release.
test-desktop: ui
	$(CARGO) build -p keiri-studio
	KEIRI_STUDIO_BIN="$(TARGET_DIR)/debug/keiri-studio" $(NPM) run test:desktop --workspace ui

test: setup fmt-check lint test-rust test-ui test-e2e test-desktop
	@echo "make test: all checks passed"

# Not part of `make test`: it needs an LLM provider (OPENAI_API_KEY, AZURE_OPENAI_*, or
# KEIRI_LLM_BASE_URL, in the environment or .env). RUNS=1 for a quick look.
.PHONY: eval-planner
RUNS ?= 3
eval-planner:
	$(CARGO) build -p keiri-cli
	$(TARGET_DIR)/debug/keiri --workspace . eval planner --cases evals/planner_cases.yaml --runs $(RUNS)

# Launch to interactive window, 5 runs, median (numbers go to src-tauri/README.md).
bench-cold-start: ui
	$(CARGO) build -p keiri-studio
	KEIRI_STUDIO_BIN="$(TARGET_DIR)/debug/keiri-studio" node scripts/bench-cold-start.mjs

bench:
	$(CARGO) bench -p keiri-plan -p keiri-xlsx -p keiri-docs -p keiri-search -p keiri-llm

# The proptest fuzz harnesses (fuzz/README.md) with a large budget; `make test` runs them with
# the small default. FUZZ_CASES=n sets the cases per harness.
.PHONY: fuzz
FUZZ_CASES ?= 20000
fuzz:
	KEIRI_FUZZ_CASES=$(FUZZ_CASES) $(CARGO) nextest run --no-fail-fast \
	  -p keiri-docs -p keiri-xlsx -p keiri-plan -p keiri-diff -E 'test(/fuzz_/)'

clean:
	$(CARGO) clean
	rm -rf ui/dist node_modules
