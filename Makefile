# Persistence — developer entry points. `make test` is what CI runs on a fresh clone.
#
#   make demo             run the guided demo on SQLite, encrypted LMDB, then PostgreSQL (installs what is missing)
#   make demo-postgres    the demo on a throw-away PostgreSQL server (installed when missing), stopped afterwards
#   make test             deps, lint, build, tests, consumer checks, DocC links
#   make deps             install libsqlite3-dev, liblmdb-dev, libsodium-dev, pkg-config when missing
#   make build            build every target
#   make lint             swift format lint --strict
#   make consumer-check   build the packages that depend on one backend product only, and check what they link
#   make memory-backend-check  the conformance suite on the in-memory backend, a package outside the library's own
#   make clean            remove build products
#   make compare          ours vs raw C vs GRDB, side by side (N=…, RUNS=…, COMMITS=…, TOOL_ROWS=…, ONLY=S1,O1); JSON in .benchmarks/
#   make bench-smoke      build the Benchmarks package (debug) and run every workload at tiny sizes (what CI runs)
#   make benchmark        the per-operation suites with allocation counts (ordo-one/benchmark)
#   make instructions     instructions per operation of every timed workload under callgrind (.benchmarks/instructions.json)
#   make reliability      kill -9 loops, bit flips and the deterministic fuzz run at full size, with their figures
#   make fuzz             libFuzzer on every decoder of stored bytes for FUZZ_SECONDS (default 60)
#   make tsan             the conformance suites (concurrency checks included) under ThreadSanitizer
#   make docs-check       every DocC link in the products' docs resolves (scripts/docc-links.sh)
#   make vendored-check   the LMDB tests on the vendored LMDB and libsodium (Apple's configuration), no system library
#   make vendored-cross-check  stores written by the system-library build open in the vendored build, and back
#   make compare-vendored L1, L4, L6 and K on the vendored libraries against the system's, one run

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help
# Targets run in the order they are listed, even under `make -j`: they share one .build directory.
.NOTPARALLEL:

SWIFT ?= swift
LINT_PATHS := Sources Tests Package.swift
# Packages that each depend on one backend product, as an app does. They build into the root's `.build`: the
# libraries they share with it (SwiftNIO, postgres-nio, swift-crypto's BoringSSL, the backends) are compiled once, not
# once more per consumer (each consumer's own `.build-consumer` compiled them again: three more cold builds, the
# PostgreSQL one of SwiftNIO, postgres-nio and BoringSSL). A product links only the objects of the targets it depends
# on, so what its binary links and holds is what a build directory of its own gives: the checks below are unchanged.
# After `make test`'s build each consumer compiles its main.swift and links (all three: 97 s on a loaded machine).
CONSUMER_DIRS := Tests/Consumers/SQLiteOnly Tests/Consumers/LMDBOnly Tests/Consumers/PostgresOnly \
	Tests/Consumers/SyncClientOnly
CONSUMER_SCRATCH := $(CURDIR)/.build

UNAME_S := $(shell uname -s)

ifeq ($(UNAME_S),Darwin)
# Homebrew's sqlite is keg-only: point pkg-config (and so SwiftPM) at it.
BREW_SQLITE := $(shell brew --prefix sqlite 2>/dev/null)
ifneq ($(BREW_SQLITE),)
export PKG_CONFIG_PATH := $(BREW_SQLITE)/lib/pkgconfig$(if $(PKG_CONFIG_PATH),:$(PKG_CONFIG_PATH))
endif
endif

.PHONY: help deps build lint test demo consumer-check consumer-check-sqlite consumer-check-lmdb consumer-check-sync
.PHONY: consumer-check-postgres memory-backend-check clean
.PHONY: compare bench-smoke benchmark instructions
.PHONY: reliability fuzz tsan test-postgres demo-postgres docs-check vendored-check vendored-cross-check compare-vendored

help:
	@echo "make demo            run the guided demo on SQLite, encrypted LMDB, then PostgreSQL (installs what is missing)"
	@echo "make demo-postgres   the demo on a throw-away PostgreSQL server, stopped afterwards"
	@echo "make test            deps, lint, build, run the tests, consumer checks, DocC links (what CI runs)"
	@echo "make deps            install libsqlite3-dev, liblmdb-dev, libsodium-dev and pkg-config when missing"
	@echo "make build           build every target"
	@echo "make lint            swift format lint --strict"
	@echo "make consumer-check  check that a one-backend app links no other backend's libraries"
	@echo "make memory-backend-check  run the conformance suite on the in-memory backend built outside the library"
	@echo "make test-postgres   start a throw-away PostgreSQL (installs it when missing), run the Postgres tests, stop it"
	@echo "make clean           remove build products"
	@echo "make compare         ours vs raw C vs GRDB in one run (N=…, RUNS=…, COMMITS=…, TOOL_ROWS=…, ONLY=S1,O1); JSON in .benchmarks/"
	@echo "make bench-smoke     build the Benchmarks package, run every workload at tiny sizes (what CI runs)"
	@echo "make benchmark       per-operation benchmarks with allocation counts (ordo-one/benchmark)"
	@echo "make instructions    instructions per operation of every timed workload, under callgrind"
	@echo "make reliability     kill -9 loops, bit flips, deterministic fuzzing at full size; prints the figures"
	@echo "make fuzz            libFuzzer on every decoder of stored bytes (FUZZ_SECONDS=60)"
	@echo "make tsan            the conformance suites (concurrency checks included) under ThreadSanitizer"
	@echo "make docs-check      every DocC link in the products' docs resolves"
	@echo "make vendored-check  the LMDB tests on the vendored LMDB and libsodium (what Apple platforms build)"
	@echo "make vendored-cross-check  stores cross between the system-library and the vendored builds"
	@echo "make compare-vendored  L1, L4, L6, K on the vendored LMDB and libsodium against the system's (release)"

deps:
	@if command -v pkg-config >/dev/null 2>&1 && pkg-config --exists sqlite3 lmdb libsodium; then \
		echo "==> deps: sqlite3, lmdb and libsodium found (pkg-config)"; \
	else \
		case "$(UNAME_S)" in \
		Linux) \
			if [ "$$(id -u)" -eq 0 ]; then sudo=""; \
			elif command -v sudo >/dev/null 2>&1; then sudo="sudo"; \
			else echo "error: installing system packages needs root or sudo" >&2; exit 1; fi; \
			echo "==> deps: installing libsqlite3-dev liblmdb-dev libsodium-dev pkg-config (apt-get)"; \
			$$sudo apt-get update -q; \
			$$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -q libsqlite3-dev liblmdb-dev libsodium-dev pkg-config; \
			;; \
		Darwin) \
			command -v brew >/dev/null 2>&1 || { echo "error: Homebrew is needed: https://brew.sh" >&2; exit 1; }; \
			echo "==> deps: installing sqlite lmdb libsodium pkg-config (Homebrew)"; \
			brew install sqlite lmdb libsodium pkg-config; \
			;; \
		*) \
			echo "error: don't know how to install sqlite3, lmdb and libsodium on $(UNAME_S); install them with pkg-config files" >&2; \
			exit 1; \
			;; \
		esac; \
		pkg-config --exists sqlite3 lmdb libsodium \
			|| { echo "error: pkg-config still can't find sqlite3, lmdb and libsodium" >&2; exit 1; }; \
		echo "==> deps: sqlite3, lmdb and libsodium installed"; \
	fi

build: deps
	@echo "==> build"
	$(SWIFT) build

lint:
	@echo "==> lint: swift format lint --strict"
	$(SWIFT) format lint --strict --recursive $(LINT_PATHS)

# Swift Testing runs tests in parallel by default (`--parallel` only changes how XCTest runs). The tests are Swift
# Testing only (house style), so XCTest is off: its "Executed 0 tests" summary would read as a run with no tests.
# The embedded backends' tests run first, the Postgres ones after them: all at once on 2 cores, the server's 160
# parallel cases shared the machine with the kill -9 loops and ran past their 5-minute limits (alone: 3 minutes).
test: deps lint
	@echo "==> test: build with tests"
	$(SWIFT) build --build-tests
	@echo "==> test: run the core and embedded backends' tests"
	$(SWIFT) test --skip-build --disable-xctest --skip PersistencePostgresTests --skip PostgresToolTests --skip PostgresCommandsTests --skip PersistenceSyncTests
	@echo "==> test: run the Postgres tests (with a throw-away PostgreSQL server)"
	scripts/with-postgres.sh $(SWIFT) test --skip-build --disable-xctest --filter PersistencePostgresTests --filter PostgresToolTests --filter PostgresCommandsTests --filter PersistenceSyncTests
	@$(MAKE) --no-print-directory consumer-check
	@$(MAKE) --no-print-directory memory-backend-check
	@$(MAKE) --no-print-directory docs-check
	@$(MAKE) --no-print-directory vendored-check
	@$(MAKE) --no-print-directory vendored-cross-check

# The Postgres tests run against a throw-away cluster (scripts/with-postgres.sh: installs postgresql when missing,
# starts a server in a temporary directory, stops and removes it even when the tests fail). Set
# PERSISTENCE_POSTGRES_URL to run against an existing server instead.
test-postgres: deps
	$(SWIFT) build --build-tests
	scripts/with-postgres.sh $(SWIFT) test --skip-build --disable-xctest --filter PersistencePostgresTests --filter PostgresToolTests --filter PostgresCommandsTests --filter PersistenceSyncTests

# The same flow twice: only the builder (and one backend-specific step) differs.
demo: deps
	@echo "==> demo: SQLite"
	$(SWIFT) run persistence demo --backend sqlite
	@echo ""
	@echo "==> demo: LMDB (encrypted)"
	$(SWIFT) run persistence demo --backend lmdb
	@echo ""
	@$(MAKE) --no-print-directory demo-postgres

# The demo on a throw-away PostgreSQL server (installed when missing), stopped and removed afterwards; set
# PERSISTENCE_POSTGRES_URL to run it against an existing server.
demo-postgres: deps
	@echo "==> demo: PostgreSQL"
	$(SWIFT) build --product persistence
	scripts/with-postgres.sh $(SWIFT) run --skip-build persistence demo --backend postgres

consumer-check: consumer-check-sqlite consumer-check-lmdb consumer-check-postgres consumer-check-sync

# One recipe for both consumers: build the package's product, run it (it prints OK or exits non-zero), then fail
# if its binary links a library matching FORBIDDEN, or holds SwiftNIO or postgres-nio code (only PersistencePostgres
# may bring them; they link statically, so `nm` looks for their symbols). swift-crypto builds BoringSSL into the
# binary statically, so the LMDB consumer shows no crypto library either (it links libsodium, the encrypted store's
# AEADs and Argon2id); what it must not show is SQLite.
consumer-check-sqlite: CONSUMER_DIR := Tests/Consumers/SQLiteOnly
consumer-check-sqlite: CONSUMER_PRODUCT := SQLiteOnlyConsumer
consumer-check-sqlite: BACKEND_PRODUCT := PersistenceSQLite
consumer-check-sqlite: FORBIDDEN := lmdb|crypto|sodium
consumer-check-sqlite: FORBIDDEN_NAMES := LMDB or crypto (swift-crypto, libsodium)
consumer-check-sqlite: FORBIDDEN_SYMBOLS := NIOCore|PostgresNIO
consumer-check-sqlite: FORBIDDEN_SYMBOL_NAMES := SwiftNIO or postgres-nio
consumer-check-lmdb: CONSUMER_DIR := Tests/Consumers/LMDBOnly
consumer-check-lmdb: CONSUMER_PRODUCT := LMDBOnlyConsumer
consumer-check-lmdb: BACKEND_PRODUCT := PersistenceLMDB
consumer-check-lmdb: FORBIDDEN := sqlite
consumer-check-lmdb: FORBIDDEN_NAMES := SQLite
consumer-check-lmdb: FORBIDDEN_SYMBOLS := NIOCore|PostgresNIO|PersistenceSQL
consumer-check-lmdb: FORBIDDEN_SYMBOL_NAMES := SwiftNIO, postgres-nio or the SQL backends' code (PersistenceSQL)
# The Postgres consumer runs against a throw-away server. swift-crypto is allowed there: postgres-nio signs its SCRAM
# logins with it. What it must not hold is LMDB's or SQLite's code.
consumer-check-postgres: CONSUMER_DIR := Tests/Consumers/PostgresOnly
consumer-check-postgres: CONSUMER_PRODUCT := PostgresOnlyConsumer
consumer-check-postgres: BACKEND_PRODUCT := PersistencePostgres
consumer-check-postgres: FORBIDDEN := lmdb|sqlite|sodium
consumer-check-postgres: FORBIDDEN_NAMES := LMDB, SQLite or libsodium
consumer-check-postgres: FORBIDDEN_SYMBOLS := mdb_|sqlite3_|PersistenceLMDB|PersistenceSQLite
consumer-check-postgres: FORBIDDEN_SYMBOL_NAMES := LMDB or SQLite
consumer-check-postgres: RUN_WITH := scripts/with-postgres.sh
# An app's side of sync: the SQLite store and the sync client hold no server code and link no LMDB.
consumer-check-sync: CONSUMER_DIR := Tests/Consumers/SyncClientOnly
consumer-check-sync: CONSUMER_PRODUCT := SyncClientConsumer
consumer-check-sync: BACKEND_PRODUCT := PersistenceSQLite and PersistenceSync
consumer-check-sync: FORBIDDEN := lmdb|sodium
consumer-check-sync: FORBIDDEN_NAMES := LMDB or libsodium
consumer-check-sync: FORBIDDEN_SYMBOLS := NIOCore|PostgresNIO|PersistenceSyncServer|Hummingbird|AsyncHTTPClient
consumer-check-sync: FORBIDDEN_SYMBOL_NAMES := SwiftNIO, postgres-nio, the sync server or an HTTP stack

consumer-check-sqlite consumer-check-lmdb consumer-check-postgres consumer-check-sync: deps
	@echo "==> $@: build $(CONSUMER_DIR) (depends on the $(BACKEND_PRODUCT) product only)"
	$(SWIFT) build --package-path $(CONSUMER_DIR) --scratch-path $(CONSUMER_SCRATCH) --product $(CONSUMER_PRODUCT)
	@bin="$$($(SWIFT) build --package-path $(CONSUMER_DIR) --scratch-path $(CONSUMER_SCRATCH) \
		--show-bin-path)/$(CONSUMER_PRODUCT)"; \
	echo "==> $@: run $$bin"; \
	$(RUN_WITH) "$$bin"; \
	if [ "$(UNAME_S)" = Darwin ]; then libs="$$(otool -L "$$bin")"; else libs="$$(ldd "$$bin")"; fi; \
	if printf '%s\n' "$$libs" | grep -i -E '$(FORBIDDEN)'; then \
		echo "error: a $(BACKEND_PRODUCT)-only binary links the libraries above ($(FORBIDDEN_NAMES))" >&2; \
		exit 1; \
	fi; \
	symbols=$$(nm "$$bin" 2>/dev/null | grep -c -E '$(FORBIDDEN_SYMBOLS)' || true); \
	if [ "$$symbols" -ne 0 ]; then \
		echo "error: a $(BACKEND_PRODUCT)-only binary holds $$symbols symbols of $(FORBIDDEN_SYMBOL_NAMES)" >&2; \
		exit 1; \
	fi; \
	echo "==> $@: OK ($$(printf '%s\n' "$$libs" | wc -l | tr -d ' ') libraries linked, none $(FORBIDDEN_NAMES);" \
		"no code of $(FORBIDDEN_SYMBOL_NAMES))"

# A backend written as an outside author writes one: the in-memory store of Tests/Consumers/MemoryBackend, a package
# of its own that depends on the PersistenceCore and PersistenceTesting products only and reaches the core through its
# backend SPI. Its tests run the whole conformance suite. It builds into the root's `.build`, as the consumer checks do,
# so only its own two targets compile after `make test`'s build (53 s on a loaded 2-core machine: 27 s to compile and
# link, 24 s for the 160 checks; 30 s when nothing changed).
memory-backend-check: deps
	@echo "==> memory-backend-check: the conformance suite on Tests/Consumers/MemoryBackend (a backend outside the library)"
	$(SWIFT) test --package-path Tests/Consumers/MemoryBackend --scratch-path $(CONSUMER_SCRATCH) --disable-xctest

docs-check: deps
	@echo "==> docs-check: DocC links of every product's docs"
	scripts/docc-links.sh

# The vendored configuration: LMDB 0.9 with POSIX semaphores and libsodium compiled from Sources/*Vendored, what
# Apple's platforms always build and Linux builds with `--traits VendoredLibraries`. Tests/Vendored is that
# configuration reduced to the LMDB backend and its tests (the root's sources, through symbolic links): the root's
# test product would compile SwiftNIO, swift-syntax and the rest once more with the trait. It needs no system LMDB or
# libsodium (no `deps`), and builds in its own scratch directory. Steps: the manifests read as SwiftPM reads them, per
# platform (scripts/check-apple-path.swift); the architecture macros of libsodium's config header for Apple's targets
# (the compiler's own macros, no SDK needed); the build; the test binary's linked libraries (no liblmdb, no
# libsodium), its headers (the vendored ones) and the vendored patch's symbol; the LMDB tests, the conformance suites
# among them, told to expect the vendored build. Measured on a loaded 2-core machine: cold (no .build-vendored) 15 min
# (9 min of CPU: swift-crypto's BoringSSL most of it; the 128 vendored C files 20 s), warm 2.5 min (the tests 2 min).
VENDORED_PACKAGE := Tests/Vendored
VENDORED_SCRATCH := $(CURDIR)/.build-vendored
VENDORED_TEST := $(SWIFT) test --skip-build --disable-xctest --package-path $(VENDORED_PACKAGE) \
	--scratch-path $(VENDORED_SCRATCH)
SODIUM_CONFIG := Sources/CSodiumVendored/config/persistence_sodium_config.h
APPLE_TRIPLES := arm64-apple-ios18.0 arm64-apple-ios18.0-simulator x86_64-apple-macos15 arm64-apple-macos15 \
	arm64_32-apple-watchos11 arm64-apple-xros2 arm64-apple-tvos18

vendored-check:
	@echo "==> vendored-check: what each platform builds, from the manifests (dump-package)"
	@mkdir -p $(VENDORED_SCRATCH)
	$(SWIFT) package dump-package --scratch-path $(VENDORED_SCRATCH)/dump-root > $(VENDORED_SCRATCH)/root.json
	$(SWIFT) package dump-package --package-path $(VENDORED_PACKAGE) --scratch-path $(VENDORED_SCRATCH)/dump-vendored \
		> $(VENDORED_SCRATCH)/vendored.json
	$(SWIFT) scripts/check-apple-path.swift $(VENDORED_SCRATCH)/root.json $(VENDORED_SCRATCH)/vendored.json
	@echo "==> vendored-check: libsodium's CPU macros for Apple's targets"
	@clang="$$(dirname "$$(command -v $(SWIFT))")/clang"; \
	for triple in $(APPLE_TRIPLES); do \
		macros=$$("$$clang" -target $$triple -E -dM -x c $(SODIUM_CONFIG) | awk '/#define (HAVE|NATIVE)_/ {print $$2}'); \
		case "$$triple" in \
		x86_64-*) want=HAVE_WMMINTRIN_H ;; \
		*) want=HAVE_ARMCRYPTO ;; \
		esac; \
		grep -x "$$want" <<< "$$macros" > /dev/null \
			|| { echo "error: $(SODIUM_CONFIG) gives $$triple no $$want" >&2; exit 1; }; \
		grep -x NATIVE_LITTLE_ENDIAN <<< "$$macros" > /dev/null \
			|| { echo "error: $(SODIUM_CONFIG) gives $$triple no byte order" >&2; exit 1; }; \
		echo "    $$triple: $$(printf '%s ' $$macros)"; \
	done
	@echo "==> vendored-check: build $(VENDORED_PACKAGE) with tests in $(VENDORED_SCRATCH)"
	$(SWIFT) build --build-tests --package-path $(VENDORED_PACKAGE) --scratch-path $(VENDORED_SCRATCH)
	@bin="$$($(SWIFT) build --package-path $(VENDORED_PACKAGE) --scratch-path $(VENDORED_SCRATCH) \
		--show-bin-path)"; test="$$bin/VendoredLibrariesPackageTests.xctest"; \
	needed="$$(readelf -d "$$test" | awk '/NEEDED/ {print $$NF}')"; \
	if printf '%s\n' "$$needed" | grep -i -E 'lmdb|sodium'; then \
		echo "error: the vendored test binary links the libraries above" >&2; exit 1; \
	fi; \
	nm "$$test" | grep ' T mdb_env_set_semprefix$$' > /dev/null \
		|| { echo "error: the vendored test binary has no vendored LMDB (mdb_env_set_semprefix)" >&2; exit 1; }; \
	for header in "$$bin/CLMDB.build/clmdb.c.d:CLMDBVendored/include/lmdb.h" \
		"$$bin/CSodium.build/csodium.c.d:CSodiumVendored/include/sodium.h"; do \
		grep -q "$${header#*:}" "$${header%%:*}" \
			|| { echo "error: $${header%%:*} doesn't name $${header#*:}" >&2; exit 1; }; \
	done; \
	echo "==> vendored-check: the test binary links $$(printf '%s\n' "$$needed" | wc -l | tr -d ' ') libraries," \
		"no liblmdb or libsodium; it holds the vendored LMDB, compiled with the vendored headers"
	@echo "==> vendored-check: the LMDB tests (conformance suites included) on the vendored libraries"
	PERSISTENCE_EXPECT_VENDORED=1 $(VENDORED_TEST)

# A store written by the system-library build (the root's `.build`, as `make test` leaves it) opens in the vendored
# build (`.build-vendored`, as vendored-check leaves it), and the other way round, with both ciphers: the default
# build writes its stores, the vendored build reads them and writes its own, the default build reads those
# (Tests/PersistenceLMDBTests/CrossBuildTests.swift); and a store one build holds open (its LMDBWorker) is refused by
# the other with `busy`, both ways. 2 min after `make test`'s build, most of it the root's no-op build planning.
CROSS_DIRECTORY := $(VENDORED_SCRATCH)/cross-build
CROSS_TEST := PERSISTENCE_CROSS_BUILD_DIRECTORY=$(CROSS_DIRECTORY)

vendored-cross-check: deps
	@echo "==> vendored-cross-check: stores between the system-library and the vendored builds, both ciphers"
	rm -rf $(CROSS_DIRECTORY)
	$(SWIFT) build --build-tests
	$(CROSS_TEST) $(SWIFT) test --skip-build --disable-xctest --filter CrossBuildTests
	$(CROSS_TEST) PERSISTENCE_CROSS_BUILD_EXPECT_OTHER=1 PERSISTENCE_EXPECT_VENDORED=1 \
		PERSISTENCE_CROSS_BUILD_OTHER_WORKER="$$($(SWIFT) build --show-bin-path)/LMDBWorker" $(VENDORED_TEST) \
		--filter CrossBuildTests --filter expectedBuild
	$(CROSS_TEST) PERSISTENCE_CROSS_BUILD_EXPECT_OTHER=1 PERSISTENCE_EXPECT_VENDORED=0 \
		PERSISTENCE_CROSS_BUILD_OTHER_WORKER="$$($(SWIFT) build --package-path $(VENDORED_PACKAGE) \
		--scratch-path $(VENDORED_SCRATCH) --show-bin-path)/LMDBWorker" $(SWIFT) test --skip-build \
		--disable-xctest --filter CrossBuildTests --filter expectedBuild

clean:
	@echo "==> clean"
	$(SWIFT) package clean
	@# Scratch directories of earlier versions of consumer-check and docs-check.
	rm -rf $(addsuffix /.build-consumer,$(CONSUMER_DIRS)) .build-docc $(VENDORED_SCRATCH)

# Benchmarks: a package of its own in Benchmarks/ (its own .build), so the root build never sees GRDB or the benchmark
# tooling. Empty variables leave the tool's defaults: N = 100,000 records, 5 runs, 1,000 single-record commits per
# observation variant (O1, O2), 1,000,000 records in the store tool's rows (T1–T3) and in the migrations in child
# processes (M2, M3: MIGRATION_ROWS), every workload.
BENCH_PACKAGE := Benchmarks
N ?=
RUNS ?=
COMMITS ?=
TOOL_ROWS ?=
MIGRATION_ROWS ?=
SEARCH_DOCUMENTS ?=
VECTORS ?=
ONLY ?=
COMPARE_ARGS := $(if $(N),--n $(N)) $(if $(RUNS),--runs $(RUNS)) $(if $(COMMITS),--commits $(COMMITS)) \
	$(if $(TOOL_ROWS),--tool-rows $(TOOL_ROWS)) $(if $(MIGRATION_ROWS),--migration-rows $(MIGRATION_ROWS)) \
	$(if $(SEARCH_DOCUMENTS),--search-documents $(SEARCH_DOCUMENTS)) $(if $(VECTORS),--vectors $(VECTORS)) \
	$(if $(ONLY),--only $(ONLY))
# T1–T3 run the root package's `persistence` executable as users run it: its release binary, a child process. It is
# built through the Benchmarks package (which depends on the root by path): the same sources in release, in the
# build directory that already holds every library it links (a root build of its own would compile SwiftNIO,
# postgres-nio and BoringSSL a second time: half an hour on 2 cores).
BENCH_BIN = $$($(SWIFT) build -c release --package-path $(BENCH_PACKAGE) --show-bin-path)
TOOL_BUILD := $(SWIFT) build -c release --package-path $(BENCH_PACKAGE) --product persistence
# The smoke run proves that every target builds and every workload runs and verifies at tiny sizes; it times nothing,
# so it builds in debug, into the root's `.build` like the consumer checks: after `make test` that holds every library
# the Benchmarks package shares with the root (SwiftNIO, postgres-nio, BoringSSL, swift-syntax and the `@Entity`
# plugin) and the debug `persistence` tool, so only GRDB, the benchmark tooling and the workloads compile. Its own
# release build of everything (swift-syntax optimized, since the `@Entity` macro) was the largest part of CI's time;
# now the build takes 427 s and the whole smoke run 570 s on a loaded 2-core machine. compare, benchmark and
# instructions still build in release.
SMOKE_BUILD := $(SWIFT) build --package-path $(BENCH_PACKAGE) --scratch-path $(CURDIR)/.build
SMOKE_BIN = $$($(SMOKE_BUILD) --show-bin-path)
# The smoke run's JSON goes to a scratch file, never over .benchmarks/compare.json.
SMOKE_JSON := .build/bench-smoke.json
SMOKE_WORKLOADS := S1 S2 S3 S4 S5 S6 S7 S8 D1 N1 RS1/insert RS1/fetch-indexed RS1/delete-all RS2/query RS2/delete-all R1 F1 V1 G1 A1 E1 P1 P2 P3 P4 P5 P6 P7 L1 L4 L6 K M M2 M3 O1 O2 Y1 Y2 Y3 Y4 T1 T2 T3
BENCH_LINT_PATHS := $(BENCH_PACKAGE)/Package.swift $(BENCH_PACKAGE)/Sources $(BENCH_PACKAGE)/Benchmarks

compare: deps
	@echo "==> compare: release build of the persistence tool (T1–T3)"
	$(TOOL_BUILD)
	@echo "==> compare: release build, then every workload against raw C and GRDB (a few minutes)"
	scripts/with-postgres.sh $(SWIFT) run -c release --package-path $(BENCH_PACKAGE) compare $(COMPARE_ARGS) \
		--tool-binary "$(BENCH_BIN)/persistence"

# L1, L4, L6 and K on the vendored LMDB and libsodium (what Apple's platforms build) against the system's, in one run:
# the Benchmarks package built again with its VendoredLibraries trait, in a scratch directory of its own (cold: about
# 25 minutes on 2 cores, most of it the dependencies), then the two binaries run in turn (scripts/compare-vendored.sh).
VENDORED_BENCH_SCRATCH := $(BENCH_PACKAGE)/.build-vendored
compare-vendored: deps
	@echo "==> compare-vendored: release builds of compare, system and vendored libraries"
	$(SWIFT) build -c release --package-path $(BENCH_PACKAGE) --product compare
	$(SWIFT) build -c release --package-path $(BENCH_PACKAGE) --product compare --traits VendoredLibraries \
		--scratch-path $(VENDORED_BENCH_SCRATCH)
	scripts/compare-vendored.sh "$(BENCH_BIN)/compare" "$$($(SWIFT) build -c release --package-path $(BENCH_PACKAGE) \
		--scratch-path $(VENDORED_BENCH_SCRATCH) --show-bin-path)/compare"

# Lints the package, builds every target in debug (the ordo-one suite included) and runs each workload once at tiny
# sizes: the tool exits non-zero when a result fails verification; then the JSON must hold a row of every workload.
bench-smoke: deps
	@echo "==> bench-smoke: swift format lint --strict"
	$(SWIFT) format lint --strict --recursive $(BENCH_LINT_PATHS)
	@echo "==> bench-smoke: build $(BENCH_PACKAGE) (debug, every target) and the persistence tool"
	$(SMOKE_BUILD)
	$(SMOKE_BUILD) --product persistence
	@echo "==> bench-smoke: compare at tiny sizes"
	scripts/with-postgres.sh "$(SMOKE_BIN)/compare" \
		--n 2000 --lookups 2000 --postgres-lookups 2000 --writer-commits 160 --runs 1 --memory-rows 20000 \
		--migration-rows 2000 --aggregate-rows 2000 --search-documents 500 --vectors 500 --northwind-fetches 2 --realm-users 2000 --realm-students 500 --commits 100 \
		--sync-rows 2000 --sync-push-records 2000 --sync-resume-records 2000 --tool-rows 2000 --tool-binary "$(SMOKE_BIN)/persistence" --json $(SMOKE_JSON)
	@if command -v python3 >/dev/null 2>&1; then \
		python3 -c 'import json, sys; json.load(open(sys.argv[1]))' $(SMOKE_JSON) \
			|| { echo "error: $(SMOKE_JSON) is not valid JSON" >&2; exit 1; }; \
	fi; \
	for workload in $(SMOKE_WORKLOADS); do \
		grep -q "\"workload\": \"$$workload\"" $(SMOKE_JSON) \
			|| { echo "error: $(SMOKE_JSON) has no $$workload row" >&2; exit 1; }; \
	done; \
	echo "==> bench-smoke: OK (rows for $(SMOKE_WORKLOADS))"

# Instructions per operation of every timed workload under callgrind (valgrind installed when missing), written to
# .benchmarks/instructions.json: the steady figure beside compare's times (scripts/instructions.sh has the method).
instructions: deps
	@if ! command -v valgrind >/dev/null 2>&1; then \
		if [ "$$(id -u)" -eq 0 ]; then sudo=""; \
		elif command -v sudo >/dev/null 2>&1; then sudo="sudo"; \
		else echo "error: installing valgrind needs root or sudo" >&2; exit 1; fi; \
		echo "==> instructions: installing valgrind (apt-get)"; \
		$$sudo apt-get update -q; \
		$$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -q valgrind; \
	fi
	scripts/instructions.sh

benchmark: deps
	@echo "==> benchmark: per-operation suites (ordo-one/benchmark)"
	$(SWIFT) package --package-path $(BENCH_PACKAGE) benchmark

# Reliability (Tests/PersistenceReliabilityTests): `make test` runs the same suites at small sizes; these are the full
# ones. The suites print one `reliability …` line of figures each, gathered at the end.
RELIABILITY_KILLS ?= 200
RELIABILITY_FLIPS ?= 1000
RELIABILITY_FUZZ_INPUTS ?= 50000
RELIABILITY_MIGRATION_RECORDS ?= 20000
RELIABILITY_LOG := .build/reliability.log

reliability: deps
	@echo "==> reliability: build with tests"
	$(SWIFT) build --build-tests
	@echo "==> reliability: $(RELIABILITY_KILLS) kills/backend and of $(RELIABILITY_MIGRATION_RECORDS)-record migrations, $(RELIABILITY_FLIPS) flips, $(RELIABILITY_FUZZ_INPUTS) fuzz inputs"
	RELIABILITY_KILLS=$(RELIABILITY_KILLS) RELIABILITY_FLIPS=$(RELIABILITY_FLIPS) \
		RELIABILITY_FUZZ_INPUTS=$(RELIABILITY_FUZZ_INPUTS) RELIABILITY_MIGRATION_RECORDS=$(RELIABILITY_MIGRATION_RECORDS) \
		$(SWIFT) test --skip-build --disable-xctest --filter PersistenceReliabilityTests 2>&1 | tee $(RELIABILITY_LOG)
	@echo "==> reliability: figures"
	@grep '^reliability ' $(RELIABILITY_LOG)

# libFuzzer: a release build of the PersistenceFuzzer target with -sanitize=fuzzer in its own scratch directory
# (FUZZING drops its replay `main` for libFuzzer's), seeded with well-formed stored bytes from the normal build.
# A finding leaves its input as $(FUZZ_SCRATCH)/crash-*; replay it with `swift run PersistenceFuzzer <file>`.
FUZZ_SECONDS ?= 60
FUZZ_SCRATCH := .build-fuzz
FUZZ_FLAGS := -Xswiftc -sanitize=fuzzer -Xswiftc -parse-as-library -Xswiftc -DFUZZING

fuzz: deps
	@echo "==> fuzz: build PersistenceFuzzer (release, libFuzzer)"
	$(SWIFT) build -c release --product PersistenceFuzzer --scratch-path $(FUZZ_SCRATCH) $(FUZZ_FLAGS)
	@echo "==> fuzz: seed corpus"
	$(SWIFT) run PersistenceFuzzer corpus $(FUZZ_SCRATCH)/corpus
	@echo "==> fuzz: run for $(FUZZ_SECONDS) s"
	"$$($(SWIFT) build -c release --scratch-path $(FUZZ_SCRATCH) $(FUZZ_FLAGS) --show-bin-path)/PersistenceFuzzer" \
		-max_total_time=$(FUZZ_SECONDS) -print_final_stats=1 -artifact_prefix=$(FUZZ_SCRATCH)/ \
		$(FUZZ_SCRATCH)/corpus 2>&1 | tee $(FUZZ_SCRATCH)/fuzz.log | grep -v '^#[0-9]*\s*\(NEW\|REDUCE\)'
	@echo "==> fuzz: $$(grep -E '^stat::number_of_executed_units' $(FUZZ_SCRATCH)/fuzz.log), no crash"

# ThreadSanitizer needs its own build of everything (its own scratch directory). The conformance suites hold the
# concurrency checks (many tasks writing and reading at once), run on SQLite, encrypted and plain LMDB; TSan makes
# the run fail on any report. Tests/tsan-suppressions.txt holds the one suppression, with its reason.
TSAN_SCRATCH := .build-tsan

tsan: deps
	@echo "==> tsan: build with tests (ThreadSanitizer)"
	$(SWIFT) build --build-tests --sanitize=thread --scratch-path $(TSAN_SCRATCH)
	@echo "==> tsan: the conformance suites of both backends"
	TSAN_OPTIONS="suppressions=$(CURDIR)/Tests/tsan-suppressions.txt $${TSAN_OPTIONS:-}" \
		$(SWIFT) test --skip-build --disable-xctest --sanitize=thread --scratch-path $(TSAN_SCRATCH) \
		--filter '[Cc]onformance'
