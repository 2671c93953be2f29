# latent-nats: bounded NATS JetStream triggers on a raw-protocol client core.
#
#   make test    every test (unit, property, fuzz corpora, conformance against
#                the pinned broker) with the race detector, plus gofmt, go vet
#                and staticcheck
#   make demo    the main job against a broker it starts itself, its
#                functions WebAssembly guests built from tools/demo/guest
#                (CLUSTER=3: on a three-node cluster, R3, tenants pinned)
#   make conformance  the trigger conformance suite alone (pinned broker)
#   make soak    the runtime under random faults for SOAK (default 2m), with
#                the ledger's verdict (a short soak runs in make test), then
#                make soak-cluster
#   make soak-cluster  the slow cluster scenarios (kills, rolling restart,
#                partitions of the routes, every node killed at once:
#                elections of 4-9 s each) against three pinned brokers, and
#                random node faults for CLUSTER_SOAK (default 45s)
#   make fairness-cluster  eight bindings while one consumer's leader is
#                paused for 10 s (docs/BENCHMARKS.md), about a minute
#   make fuzz    each fuzz target for FUZZTIME (default 30s)
#   make bench   the benchmarks (see docs/BENCHMARKS.md)
#   make broker  build the pinned nats-server into .cache/
#   make compat  the conformance suite (COMPAT_RUN, default all) and the
#                demo against each of COMPAT_VERSIONS beside the pinned
#                2.14.6; downloads and builds those servers into .cache/
#                (docs/COMPATIBILITY.md). Not part of make test.
#   make guests  regenerate each trigger/wasmhost/testdata/guests/*.wasm from
#                its .wat with Debian's wabt (wat2wasm), after editing a .wat;
#                commit both. Not part of make test: there
#                TestGuestsMatchText checks the committed pair agrees (.ci/run
#                installs wabt and sets LATENT_NATS_REQUIRE_WABT so that a
#                missing wat2wasm fails instead of skipping).

GO        ?= go
# The repository's modules (go.work): the library at the root, the harness
# (tools, and conformance) each in its own module so that a program
# importing the library gets only the library's requirements.
# tools/peerbench is a module apart, with its own go.work.
PKGS      := ./... ./tools/... ./conformance/...
FUZZTIME  ?= 30s
SOAK      ?= 2m
# TestClusterSoakRounds' faults last CLUSTER_SOAK (at most 4h); an hour
# wants CLUSTER_SOAK_TIMEOUT=90m.
CLUSTER_SOAK         ?= 45s
CLUSTER_SOAK_TIMEOUT ?= 20m
CACHE     := $(CURDIR)/.cache
BROKER    := $(CACHE)/nats-server-v2.14.6
GUEST     := $(CACHE)/demo-guest.wasm
export LATENT_NATS_SERVER := $(BROKER)

# The newest 2.14.x and 2.15.x releases the Go module proxy served when
# docs/COMPATIBILITY.md was last written (go list -m -versions
# github.com/nats-io/nats-server/v2).
COMPAT_VERSIONS ?= 2.14.10 2.15.3
COMPAT_RUN      ?= .
SERVER_MODULE   := github.com/nats-io/nats-server/v2

.PHONY: test lint unit conformance soak soak-cluster fairness-cluster fuzz bench broker demo demo-build compat guests clean

test: lint broker unit

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	  if [ -n "$$out" ]; then echo "gofmt: not formatted:"; echo "$$out"; exit 1; fi
	$(GO) vet $(PKGS)
	$(GO) tool staticcheck $(PKGS)
	# the library alone, on its own go.mod: builds and vets, tests included
	GOWORK=off $(GO) vet ./...
	@if $(GO) list -deps -test $(PKGS) | grep -q '^github.com/nats-io/nats.go'; then \
	  echo "the workspace's package graph contains nats.go"; exit 1; fi
	@if $(GO) list -deps ./conn ./internal/jspull ./trigger ./trigger/refhost | grep -q '^github.com/tetratelabs/wazero'; then \
	  echo "a core package links wazero: only trigger/wasmhost may"; exit 1; fi

broker: $(BROKER)

$(BROKER): tools/go.mod tools/go.sum
	@mkdir -p $(CACHE)
	$(GO) build -o $@ github.com/nats-io/nats-server/v2

unit:
	$(GO) test -race -count=1 -timeout 12m -skip '^TestClusterSoak|^TestClusterFairness' $(PKGS)
	# conn's fake-server tests again over the thread socket (the opt-in
	# Config.ThreadSocket on Linux)
	$(GO) test -race -count=1 -timeout 5m ./conn -args -thread-socket

conformance: broker
	$(GO) test -race -count=1 -run '^TestTrigger' ./conformance/

soak: broker
	$(GO) run ./tools/soak/cmd/soak -duration $(SOAK) $(SOAKFLAGS)
	$(MAKE) soak-cluster

soak-cluster: broker
	LATENT_CLUSTER_SOAK=$(CLUSTER_SOAK) $(GO) test -race -count=1 -timeout $(CLUSTER_SOAK_TIMEOUT) -run '^TestClusterSoak' -v ./conformance/

fairness-cluster: broker
	$(GO) test -race -count=1 -timeout 10m -run '^TestClusterFairness$$' -v ./conformance/

fuzz:
	@set -e; for pkg in $$($(GO) list $(PKGS)); do \
	  for t in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz' || true); do \
	    echo "== $$pkg $$t"; $(GO) test -run '^$$' -fuzz "^$$t$$" -fuzztime $(FUZZTIME) $$pkg; \
	  done; done

bench:
	$(GO) test -run '^$$' -bench . -benchmem $(PKGS)

# The demo's functions run as a WebAssembly guest: tools/demo/guest, built
# by the Go toolchain as a WASI reactor and given to the demo with -guest.
demo: broker demo-build
	$(CACHE)/demo -guest $(GUEST) $(if $(CLUSTER),-cluster $(CLUSTER)) $(DEMOFLAGS)

demo-build:
	@mkdir -p $(CACHE)
	GOOS=wasip1 GOARCH=wasm $(GO) build -buildmode=c-shared -o $(GUEST) ./tools/demo/guest
	$(GO) build -o $(CACHE)/demo ./tools/demo

# Each other version is built once with `go install module@version` (its
# own go.mod, outside this module's pin) and renamed to
# .cache/nats-server-v<version>; LATENT_NATS_SERVER_VERSION is the explicit
# opt-in tools/broker requires to run a binary of another version.
compat: broker demo-build
	@set -e; for v in $(COMPAT_VERSIONS); do \
	  bin=$(CACHE)/nats-server-v$$v; \
	  if [ ! -x $$bin ]; then \
	    echo "== building nats-server v$$v into $$bin"; \
	    mkdir -p $(CACHE)/compat-v$$v; \
	    GOBIN=$(CACHE)/compat-v$$v $(GO) install $(SERVER_MODULE)@v$$v; \
	    mv $(CACHE)/compat-v$$v/nats-server $$bin; \
	  fi; \
	done
	@status=0; for v in 2.14.6 $(COMPAT_VERSIONS); do \
	  echo "== nats-server v$$v: conformance (-run '$(COMPAT_RUN)')"; \
	  LATENT_NATS_SERVER=$(CACHE)/nats-server-v$$v LATENT_NATS_SERVER_VERSION=$$v \
	    $(GO) test -race -count=1 -timeout 40m -run '$(COMPAT_RUN)' ./conformance/ \
	    && echo "== nats-server v$$v: conformance passed" \
	    || { echo "== nats-server v$$v: conformance FAILED"; status=1; }; \
	  echo "== nats-server v$$v: demo"; \
	  LATENT_NATS_SERVER=$(CACHE)/nats-server-v$$v LATENT_NATS_SERVER_VERSION=$$v $(CACHE)/demo -guest $(GUEST) \
	    && echo "== nats-server v$$v: demo passed" \
	    || { echo "== nats-server v$$v: demo FAILED"; status=1; }; \
	done; exit $$status

guests:
	@set -e; for wat in trigger/wasmhost/testdata/guests/*.wat; do \
	  echo "wat2wasm $$wat"; wat2wasm $$wat -o $${wat%.wat}.wasm; \
	done

clean:
	rm -rf $(CACHE)
