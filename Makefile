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
        test-rust test-ui test-e2e test-desktop test-toon structure bench bench-cold-start clean \
        package package-smoke embeddings embeddings-check studio-build generated

help:
	@echo "make studio   build and open the desktop window (sets up what is missing)"
	@echo "make test     run every check: fmt, clippy, Rust tests, UI unit + e2e tests"
	@echo "make serve    run the studio in a browser at http://127.0.0.1:8710"
	@echo "make bench    run the benchmarks"
	@echo "make package  build the installable Linux package (.deb) of the desktop app"
	@echo "make embeddings  regenerate the bundled catalog embeddings (block_specs/.embeddings)"
	@echo "make bench-cold-start  desktop cold start + first candidate search (BUILD=release|debug)"
	@echo "make eval-planner  evaluate the planner on evals/planner_cases.yaml (needs an LLM)"
	@echo "make eval-offline  evaluate the offline composer on evals/offline_cases.yaml (no LLM)"
	@echo "make generated  rewrite files generated from the Rust sources (ui/src/api/: functions.ts, schema.json, generated.ts; the ops of block_specs/output/excel.patch_workbook.yaml)"

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
# ui/dist is a file target on the UI's sources, so the stages of `make test` (each its own
# make) build it once, not once per stage.
UI_SOURCES := $(shell find ui/src ui/public ui/index.html ui/vite.config.* ui/tsconfig*.json \
                ui/package.json -type f 2>/dev/null)
ui/dist/index.html: $(UI_SOURCES) node_modules/.package-lock.json
	$(NPM) run build --workspace ui
	@touch $@

ui: ui/dist/index.html

build: ui
	$(CARGO) build -p keiri-cli

# `make studio` runs the optimised (release) build: the debug build embeds the catalog and
# answers searches with unoptimised code, which an accountant would take for the app being
# slow. The release profile is the one `make package` ships, so the two share one build.
studio-build: setup ui
	@echo "make studio: building the optimised (release) app; the first build takes a while"
	$(CARGO) build --release -p keiri-studio

studio: studio-build
	@if [ -z "$${DISPLAY:-}$${WAYLAND_DISPLAY:-}" ]; then \
	  echo "No display found: run it under Xvfb with"; \
	  echo "  xvfb-run -a -s '-screen 0 1280x800x24' $(TARGET_DIR)/release/keiri-studio"; \
	else \
	  echo "make studio: starting $(TARGET_DIR)/release/keiri-studio (release build)"; \
	  KEIRI_WORKSPACE="$${KEIRI_WORKSPACE:-$(CURDIR)}" $(TARGET_DIR)/release/keiri-studio; \
	fi

# The installable Linux package of the desktop app (Tauri's bundler; docs/packaging.md): a .deb
# with the icon, the version, the catalog, templates, skillpacks, the embedding pack and the
# local model. Nothing is downloaded (the deb bundler needs only dpkg tools).
package: setup ui embeddings-check
	$(NPM) exec --no -- tauri build --ci --bundles deb --config src-tauri/tauri.bundle.json
	@ls -1 $(TARGET_DIR)/release/bundle/deb/*.deb

# Installs that .deb into a clean Debian chroot and screenshots the installed app under Xvfb
# (root and debootstrap; ui/test-results/deb-installed.png).
package-smoke:
	bash scripts/deb-smoke.sh

# The bundled catalog's and templates' passage vectors for the local model. Run it after
# changing block_specs/ or templates/ (a test fails while the pack is stale).
embeddings: setup-models
	$(CARGO) run -p keiri-search --example embeddings_pack -- $(CURDIR)

embeddings-check:
	$(CARGO) run -q -p keiri-search --example embeddings_pack -- --check $(CURDIR)

serve: build
	$(TARGET_DIR)/debug/keiri serve --workspace . --ui-dir ui/dist

## --- checks ------------------------------------------------------------------------------
fmt:
	$(CARGO) fmt --all

fmt-check:
	$(CARGO) fmt --all -- --check

# clippy, then the house rules (scripts/check-structure.py): file sizes, import cycles inside a
# crate, and no name of an API function, tool or block copied into a second hand-written list.
lint: ui structure
	$(CARGO) clippy --workspace --all-targets -- -D warnings

structure:
	python3 scripts/check-structure.py

# Tests never touch the user's state: settings and the embedding cache of every process the
# Rust tests start go to a fresh directory under the target dir (tests that need their own
# set them explicitly; the e2e and desktop tests use their temporary workspaces).
TEST_STATE := $(TARGET_DIR)/test-state
#
# clippy runs inside the test build: clippy-driver is the compiler of the workspace's own crates
# (RUSTC_WORKSPACE_WRAPPER, as `cargo clippy` itself sets it; CLIPPY_ARGS is how cargo-clippy
# hands it `-D warnings`). clippy-driver is a full rustc, so the test binaries it compiles are
# the ones nextest runs, and the dependencies are compiled once instead of once for a check build
# and again for the test build (cold, on 2 cores: 35-37 min for the one build against 13 + 27
# for the two). Most of what is left is the dependencies: Polars was a third of it until its
# crates were left unoptimised in debug builds (Cargo.toml, [profile.dev.package.polars*]);
# the workspace's own crates are under a tenth (see the --timings report below).
# `--all-targets` lints what `make lint` lints: libraries with and without cfg(test), binaries,
# tests, examples, and the benches (compiled in test mode, not run). Plain `cargo` builds after
# this recompile the workspace's crates (the wrapper is part of their fingerprint), never the
# dependencies; `make lint` is still there for a quick look on its own. `--timings` leaves the
# build's timeline in target/cargo-timings/ (where a cold build's minutes go, crate by crate).
CLIPPY_DRIVER = $(shell rustup which clippy-driver 2>/dev/null || command -v clippy-driver)
CLIPPY_IN_BUILD = RUSTC_WORKSPACE_WRAPPER="$(CLIPPY_DRIVER)" \
  CLIPPY_ARGS="-D__CLIPPY_HACKERY__warnings__CLIPPY_HACKERY__"
test-rust: ui
	@[ -x "$(CLIPPY_DRIVER)" ] || { echo "clippy-driver not found: rustup component add clippy" >&2; exit 1; }
	rm -rf "$(TEST_STATE)" && mkdir -p "$(TEST_STATE)"
	$(CLIPPY_IN_BUILD) $(CARGO) test --workspace --all-targets --no-run --timings
	$(CLIPPY_IN_BUILD) KEIRI_CONFIG_DIR="$(TEST_STATE)/config" \
	  KEIRI_EMBED_CACHE_DIR="$(TEST_STATE)/embeddings" \
	  XDG_CONFIG_HOME="$(TEST_STATE)/xdg-config" XDG_CACHE_HOME="$(TEST_STATE)/xdg-cache" \
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

# The real desktop window under Xvfb, driven by tauri-driver + WebKitWebDriver. The binary
# embeds the freshly built ui/dist (the default `custom-protocol` feature), like a release.
# Inside `make test` it reuses the keiri-studio binary test-rust built (nextest builds the
# package's binary for its integration tests, with the same ui/dist) instead of compiling the
# Tauri chain a second time without the dev-only `test` feature.
DESKTOP_BUILD ?= 1
test-desktop: ui
	$(if $(filter 1,$(DESKTOP_BUILD)),$(CARGO) build -p keiri-studio)
	KEIRI_STUDIO_BIN="$(TARGET_DIR)/debug/keiri-studio" $(NPM) run test:desktop --workspace ui

# Each stage is its own make (scripts/stages.sh), which prints the time of every stage at the
# end. clippy runs inside test-rust's build (above); the e2e and desktop stages reuse the
# binaries nextest built.
TEST_STAGES := setup fmt-check structure test-rust test-ui test-e2e test-desktop
test:
	@bash scripts/stages.sh E2E_BUILD=0 DESKTOP_BUILD=0 $(TEST_STAGES)
	@echo "make test: all checks passed"

# Not part of `make test`: it needs an LLM provider (OPENAI_API_KEY, AZURE_OPENAI_*, or
# KEIRI_LLM_BASE_URL, in the environment or .env). RUNS=1 for a quick look.
.PHONY: eval-planner
RUNS ?= 3
eval-planner:
	$(CARGO) build -p keiri-cli
	$(TARGET_DIR)/debug/keiri --workspace . eval planner --cases evals/planner_cases.yaml --runs $(RUNS)

# The offline composer (no LLM): template choice or an honest no_fit on evals/offline_cases.yaml.
# CI runs it through keiri-cli's eval test, which holds the README's pass rate.
.PHONY: eval-offline
eval-offline:
	$(CARGO) build -p keiri-cli
	$(TARGET_DIR)/debug/keiri --workspace . eval offline --cases evals/offline_cases.yaml

# Launch to interactive window and to the first candidate list, 5 runs, medians (numbers go
# to src-tauri/README.md). BUILD=debug measures the debug build instead of the release one.
BUILD ?= release
bench-cold-start: ui
	$(CARGO) build $(if $(filter release,$(BUILD)),--release) -p keiri-studio
	KEIRI_STUDIO_BIN="$(TARGET_DIR)/$(BUILD)/keiri-studio" node scripts/bench-cold-start.mjs

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

# Files generated from the Rust sources: from keiri-api's one table of functions, the UI's
# function list (ui/src/api/functions.ts) and the JSON Schema of every request and response
# (ui/src/api/schema.json); from that schema, the UI's API types (ui/src/api/generated.ts); from
# keiri-xlsx's op definitions, the `operations` items of the excel.patch_workbook block spec.
# A Rust test fails while the first two or the block spec is stale, a UI unit test while the
# API types are.
.PHONY: generated
# The whole workspace with the test build's wrapper, filtered to the three tests: `-p` alone
# would resolve the dependencies' features for one package and rebuild Polars and the rest.
generated: setup-npm
	$(CLIPPY_IN_BUILD) KEIRI_UPDATE_GENERATED=1 $(CARGO) nextest run --workspace \
	  -E 'test(the_generated_typescript_is_current) | test(the_generated_schema_is_current) | test(the_block_spec_lists_every_op)'
	cd ui && node scripts/api-types.mjs
