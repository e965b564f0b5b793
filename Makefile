# gpugraph — the two commands that matter are `make run` and `make test`.
GO      ?= go
# Recipes that pipe (make test into its summary) fail when any stage fails.
SHELL       := bash
.SHELLFLAGS := -o pipefail -c
PKGS    ?= ./...
TESTFLAGS ?= -race -count=1 -timeout 20m

.PHONY: run build gpu-check test fuzz generate check-generate lint bench bench-peer bench-micro abuse playground console console-screenshots

# progress runs the command in $(1) saying every 10 s that it still runs,
# so a long compile (SQLite's C is one file) is never silent. The ticker
# stops with the command, and with this shell on Ctrl-C.
progress = ( s=0; while sleep 10 && kill -0 $$$$ 2>/dev/null; do s=$$((s+10)); echo "  ... still building ($${s} s)"; done ) & t=$$!; \
	trap 'kill $$t 2>/dev/null' EXIT; trap 'exit 130' INT TERM; $(1)

# quietbuild builds $(2) into $(1), listing each package it compiles,
# without a dependency's compiler warnings (go-nvml's cgo warns on every
# deprecated NVML call it wraps) unless its build fails: cmd/gosummary.
quietbuild = $(GO) build -v -json -o $(1) $(2) | bin/gosummary

## run: build bin/gpugraph and bin/gpugraph-agent (go build -v lists each package it compiles), then serve on :8080 with embedded SQLite (gpugraph.db) and the demo data set; RUNFLAGS are the server's flags
RUNFLAGS ?=
run:
	@echo "building bin/gpugraph and bin/gpugraph-agent: a first build compiles every dependency, cgo SQLite and NVML among them (about 2 minutes on 2 cores); later builds take seconds"
	@$(GO) build -o bin/gosummary ./cmd/gosummary
	@$(call progress,$(call quietbuild,bin/gpugraph,.) && $(call quietbuild,bin/gpugraph-agent,-tags static_build ./cmd/agent))
	@echo "starting bin/gpugraph $(RUNFLAGS) (bin/gpugraph --help lists its flags and commands)"
	@bin/gpugraph $(RUNFLAGS)

## build: every binary into bin/ (ignored by git; make lint fails on a tracked binary): the server (bin/gpugraph), the node agent (bin/gpugraph-agent), the tools of cmd/ under their own names (bin/benchreport, …) and the demo's generator (bin/demogen)
build:
	@$(GO) build -o bin/gosummary ./cmd/gosummary
	@$(call progress,$(call quietbuild,bin/gpugraph,.))
	@$(call progress,$(call quietbuild,bin/gpugraph-agent,-tags static_build ./cmd/agent))
	$(GO) build -o bin/ ./cmd/abusereport ./cmd/benchpeer ./cmd/benchreport ./cmd/cluster-agent ./cmd/fleetgen ./cmd/trackedbinaries
	$(GO) build -o bin/demogen ./demo/gen

## gpu-check: on a machine with NVIDIA GPUs, report each GPU's VFIO readiness (IOMMU group, drivers), build the agent and check what it reads through the real NVML (inventory, health, XID watch, exporter metrics) against nvidia-smi -q; skips with a line where there is no GPU; under 3 minutes
gpu-check:
	sh scripts/gpu-check.sh

## test: every test on SQLite, and on PostgreSQL too when TEST_DATABASE_URL is set; prints go test's lines, then "N passed, N failed, N skipped" (SLOWEST=10 also lists the slowest tests)
SLOWEST ?= 0
test:
	$(GO) build -o bin/gosummary ./cmd/gosummary
	$(GO) test $(TESTFLAGS) -json $(PKGS) | bin/gosummary -slowest $(SLOWEST)

## fuzz: every fuzz target for FUZZTIME (1000x: a thousand inputs) each, from its seed corpus (GraphQL request path and body, the field count off a document's tokens (and off its bytes, against the lexer's), REST parameters, the create body of POST /v1/vms, REST JSON bodies, filterBy, credential expiry, cursors, the Run:ai face's instants, Accept-Encoding, the GraphQL answer's writing, the GraphQL body's members split while it is checked, by jsontext and by the quick pass against it, the cluster sync batch, the connector's quantities, the pods filter's SQL, stored histograms' quantiles, PCI bus ids)
FUZZTIME ?= 1000x
fuzz:
	$(GO) test -run '^$$' -fuzz '^FuzzGraphQL$$' -fuzztime $(FUZZTIME) -parallel 2 ./internal/httpapi/
	$(GO) test -run '^$$' -fuzz '^FuzzGraphQLBody$$' -fuzztime $(FUZZTIME) -parallel 2 ./internal/httpapi/
	$(GO) test -run '^$$' -fuzz '^FuzzCountFields$$' -fuzztime $(FUZZTIME) -parallel 2 ./internal/httpapi/extension/
	$(GO) test -run '^$$' -fuzz '^FuzzScanFields$$' -fuzztime $(FUZZTIME) -parallel 2 ./internal/httpapi/extension/
	$(GO) test -run '^$$' -fuzz '^FuzzRESTParams$$' -fuzztime $(FUZZTIME) -parallel 2 ./internal/httpapi/
	$(GO) test -run '^$$' -fuzz '^FuzzCreateBody$$' -fuzztime $(FUZZTIME) -parallel 2 ./internal/httpapi/
	$(GO) test -run '^$$' -fuzz '^FuzzWriteResponse$$' -fuzztime $(FUZZTIME) -parallel 2 ./internal/httpapi/transport/
	$(GO) test -run '^$$' -fuzz '^FuzzScanJSON$$' -fuzztime $(FUZZTIME) -parallel 2 ./internal/httpapi/transport/
	$(GO) test -run '^$$' -fuzz '^FuzzSplitBody$$' -fuzztime $(FUZZTIME) -parallel 2 ./internal/httpapi/transport/
	$(GO) test -run '^$$' -fuzz '^FuzzNegotiate$$' -fuzztime $(FUZZTIME) -parallel 2 ./internal/lib/contentcoding/
	@for t in $$(grep -ho '^func Fuzz[A-Za-z0-9_]*' internal/lib/filterby/*_test.go | sed 's/func //'); do \
		$(GO) test -run '^$$' -fuzz "^$$t\$$" -fuzztime $(FUZZTIME) -parallel 2 ./internal/lib/filterby/ || exit 1; done
	$(GO) test -run '^$$' -fuzz '^FuzzParseExpires$$' -fuzztime $(FUZZTIME) -parallel 2 ./internal/services/credentials/
	$(GO) test -run '^$$' -fuzz '^FuzzDecodeJSON$$' -fuzztime $(FUZZTIME) -parallel 2 ./internal/lib/bounds/
	$(GO) test -run '^$$' -fuzz '^FuzzParseCursor$$' -fuzztime $(FUZZTIME) -parallel 2 ./internal/lib/paging/
	$(GO) test -run '^$$' -fuzz '^FuzzParseTimeDefaultUTC$$' -fuzztime $(FUZZTIME) -parallel 2 ./models/
	$(GO) test -run '^$$' -fuzz '^FuzzInstanceTypeProblem$$' -fuzztime $(FUZZTIME) -parallel 2 ./models/
	$(GO) test -run '^$$' -fuzz '^FuzzParse$$' -fuzztime $(FUZZTIME) -parallel 2 ./internal/cluster/clusterbatch/
	$(GO) test -run '^$$' -fuzz '^FuzzQuantities$$' -fuzztime $(FUZZTIME) -parallel 2 ./internal/cluster/clusterconnector/
	$(GO) test -run '^$$' -fuzz '^FuzzFilterSQL$$' -fuzztime $(FUZZTIME) -parallel 2 ./internal/store/
	$(GO) test -run '^$$' -fuzz '^FuzzHistogramQuantile$$' -fuzztime $(FUZZTIME) -parallel 2 ./internal/lib/timeseries/
	$(GO) test -run '^$$' -fuzz '^FuzzNormalizeBusID$$' -fuzztime $(FUZZTIME) -parallel 2 ./internal/agent/

## generate: regenerate graph/ from schema.graphqls (cmd/gqlgen: gqlgen with the field model's plugin, which writes graph/fieldmodel_gen.go)
generate:
	$(GO) run ./cmd/gqlgen

## check-generate: fail when the committed generated code differs from a fresh generate
check-generate: generate
	@git diff --exit-code -- graph/ || (echo "graph/ is out of date with schema.graphqls: run make generate and commit" >&2; exit 1)
	@test -z "$$(git status --porcelain -- graph/)" || (echo "make generate left new files in graph/" >&2; git status --porcelain -- graph/; exit 1)

## lint: no tracked build output (cmd/trackedbinaries), gofmt, goimports (gpugraph/… imports in their own group) and go vet
lint:
	@$(GO) run ./cmd/trackedbinaries
	@unformatted=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$unformatted" ]; then echo "gofmt would change:"; echo "$$unformatted"; exit 1; fi
	@misgrouped=$$($(GO) tool goimports -local gpugraph -l $$(git ls-files '*.go' | grep -v '^graph/')); if [ -n "$$misgrouped" ]; then echo "goimports -local gpugraph would change:"; echo "$$misgrouped"; exit 1; fi
	$(GO) vet $(PKGS)

## bench: the twelve figures (the eighth: 1,000 live subscribers; the ninth: create and the queue, alone with `go run ./cmd/benchreport -figures 9 -o BENCHMARKS.md`; the tenth: the cluster connector over a real kube-apiserver of 5,000 nodes and 150,000 pods, bin/gpugraph and bin/cluster-agent as processes, alone with `-figures 10`, skipped where test/kube/build.sh has not built kube-apiserver; the eleventh: one metering pass over 10,000 running workloads of 1,000 organizations, alone with `-figures 11`; the twelfth: 40,000 heartbeats of a 20,000-node fleet, 64 agents at once, alone with `-figures 12`), then the pod metrics range read through the store and through Prometheus; on SQLite (and PostgreSQL when TEST_DATABASE_URL is set): prints the table, rewrites it in BENCHMARKS.md
bench:
	$(GO) build -o bin/gpugraph .
	$(GO) build -o bin/cluster-agent ./cmd/cluster-agent
	$(GO) run ./cmd/benchreport -o BENCHMARKS.md
	@echo "pod metrics range read, built-in store vs Prometheus (same samples, same query; skips without prometheus):"
	$(GO) test -run '^$$' -bench PodMetricsRangeRead -benchtime 5x ./internal/services/promsource

## bench-peer: gpugraph beside PostGraphile v4 and v5 (installed from npm into caches outside the repo, v5 with the Node.js 22 it needs) on one PostgreSQL fleet (TEST_DATABASE_URL's server): Q1–Q4 latency, CPU per request and requests/s, each server's resident memory after the load, into BENCHMARKS.md; skips without npm
PEERFLAGS ?=
bench-peer:
	$(GO) build -o bin/gpugraph .
	$(GO) run ./cmd/benchpeer -server bin/gpugraph -o BENCHMARKS.md $(PEERFLAGS)

## abuse: the attacks of issues 23 and 39 against bin/gpugraph run as processes of its own (SQLite; two replicas on one PostgreSQL when TEST_DATABASE_URL is set): per attack the server CPU and memory per request, what it answered, the victim tenant's p50/p99 against its baseline, PASS/FAIL; rewrites its section of BENCHMARKS.md, exits non-zero when a bound fails
ABUSEFLAGS ?=
abuse:
	$(GO) build -o bin/gpugraph .
	$(GO) run ./cmd/abusereport -server bin/gpugraph -o BENCHMARKS.md $(ABUSEFLAGS)

## bench-micro: every package's Go benchmarks, once each (PostgreSQL ones run when TEST_DATABASE_URL is set)
bench-micro:
	$(GO) test -run '^$$' -bench . -benchtime 1x -timeout 30m $(PKGS)

## playground: rebuild the embedded GraphiQL bundle from web/build (needs npm)
playground:
	sh web/build/build.sh

## console: rebuild the fleet console (/console) from web/console: typed operations (web/console/src/gql) from schema.graphqls, tsc, the bundle into web/dist/console (needs npm)
console:
	sh web/console/build.sh

## console-screenshots: run the console's browser tests, writing each page's screenshot to docs/console/<page>.png (needs chromium and the console's modules: sh web/console/install.sh)
console-screenshots:
	GPUGRAPH_CONSOLE_SCREENSHOTS=1 $(GO) test -count=1 -run 'TestConsole' ./web/
