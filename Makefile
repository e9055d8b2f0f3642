# allot: build, test and check. `make help` lists the targets.

GO ?= go

# Static analysis, pinned; installed into bin/tools by `make check` when missing.
STATICCHECK_VERSION := v0.8.2
TOOLS := $(CURDIR)/bin/tools
STATICCHECK := $(TOOLS)/staticcheck
GREMLINS_VERSION := v0.6.0
GREMLINS := $(TOOLS)/gremlins

# Mutation testing (docs/testing.md): what is mutated, one package at a
# time (its subpackages left out), each as PKG or PKG:FILE (that file
# alone), and how many times its plain test run (build included) a
# mutant's may take.
MUTATE ?= ./coflow ./master/state:cmd_task.go ./executor:recover.go
MUTATECOEF ?= 60

# Benchmarks: `make bench BENCH=Allocate BENCHTIME=10x` (or BENCHTIME=2s).
SIZE ?= 1GB
BENCH ?= .
BENCHTIME ?= 3x
BENCHPKGS ?= ./...

# Fuzzing: every Fuzz target of every package, each for FUZZTIME.
FUZZTIME ?= 30s
FUZZPKGS ?= ./...
# The packages that hold Fuzz targets, for the short CI run.
FUZZSMOKEPKGS := $(shell grep -rl --include='*_test.go' '^func Fuzz' . | xargs -n1 dirname | sort -u)

.PHONY: all help build examples demo mapreduce-large bench-mapreduce bench-coflow real-cluster test check fmt-check vet staticcheck tools imports filesize refs tidy-check bench bench-jobs bench-smoke fuzz fuzz-smoke test-long faults mutate ui-screenshots clean

all: build

help:
	@echo 'make build      build bin/allot'
	@echo 'make demo       a local cluster running the MapReduce and MPI examples to verified results'
	@echo 'make real-cluster  the README recipe on one machine: three masters and three agents as processes'
	@echo 'make test       all tests with the race detector'
	@echo 'make check      gofmt, vet, staticcheck, import rules, file and function sizes, references, go mod tidy'
	@echo 'make bench      every benchmark (BENCH=$(BENCH) BENCHTIME=$(BENCHTIME) BENCHPKGS=$(BENCHPKGS))'
	@echo 'make bench-smoke every benchmark once, at small sizes (CI)'
	@echo 'make mapreduce-large the MapReduce example on SIZE=$(SIZE) with its defaults on allot dev, verified, each task within its memory'
	@echo 'make bench-mapreduce the MapReduce example on 90 MB beside a single-process baseline (sort | uniq -c, GNU sort)'
	@echo 'make bench-coflow the coflow testbed: FB2010 replayed as real transfers between 8 agents under philae, aalo, fifo and uncoordinated, beside the simulator (5 min)'
	@echo 'make bench-jobs the job runner: a service of N=1000 instances to RUNNING on allot dev'
	@echo 'make fuzz-smoke every Fuzz target for 5 s (CI)'
	@echo 'make test-long  the long property tests and the 100-job disk budget run (ALLOT_LONG=1; CI)'
	@echo 'make fuzz       every Fuzz target for FUZZTIME=$(FUZZTIME)'
	@echo 'make mutate     mutation testing of MUTATE=$(MUTATE) (docs/testing.md)'
	@echo 'make ui-screenshots a picture of each web UI page in ui-screenshots/ (needs Chromium)'
	@echo 'make faults     the long fault run: master and agent processes, the leader killed every 10 s, 1,000 tasks (docs/faults.md)'
	@echo 'make clean      remove bin/ and test caches'

build:
	$(GO) build -o bin/allot ./cmd/allot

examples:
	$(GO) build -o bin/mapreduce ./examples/mapreduce
	$(GO) build -o bin/mpi ./examples/mpi

demo: build examples
	@scripts/demo.sh

mapreduce-large: build examples
	@SIZE=$(SIZE) scripts/mapreduce-large.sh

bench-mapreduce: build examples
	@SIZE=90MB scripts/mapreduce-bench.sh

# The coflow testbed: FB2010 folded onto 8 agents, replayed as real
# transfers under each policy beside the simulator (docs/coflow.md).
bench-coflow: build
	bin/allot bench coflow --trace sim/coflowsim/testdata/FB2010-1Hr-150-0.txt

real-cluster: build examples
	@scripts/real-cluster.sh

# The flood test measures memory and latency, which the race detector's cost
# on large messages would distort: it runs in a pass of its own, without it.
test:
	@GO=$(GO) scripts/gotest.sh -race -count=1 -timeout 20m ./...
	@GO=$(GO) scripts/gotest.sh -count=1 -timeout 5m -run '^TestIsolation_Flood$$' ./integration/

check: fmt-check vet staticcheck imports filesize refs tidy-check

fmt-check:
	@echo '==> gofmt'
	@out="$$(gofmt -l .)"; if [ -n "$$out" ]; then \
		echo "gofmt: these files need formatting (run gofmt -w):"; echo "$$out"; exit 1; fi

vet:
	@echo '==> go vet'
	$(GO) vet ./...

staticcheck: tools
	@echo '==> staticcheck $(STATICCHECK_VERSION)'
	$(STATICCHECK) ./...

# Installs staticcheck only when it is missing or not the pinned version.
tools:
	@if ! "$(STATICCHECK)" -version 2>/dev/null | grep -qF '($(STATICCHECK_VERSION:v%=%))'; then \
		echo "installing staticcheck $(STATICCHECK_VERSION) into bin/tools"; \
		GOBIN="$(TOOLS)" $(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION); \
	fi

imports:
	@echo '==> import rules'
	@scripts/check-imports.sh

filesize:
	@echo '==> file and function sizes'
	@scripts/check-filesize.sh

refs:
	@echo '==> references'
	@scripts/check-refs.sh

# `go mod tidy -diff` changes nothing on disk; it prints the diff tidy would make and fails.
tidy-check:
	@echo '==> go mod tidy'
	@$(GO) mod tidy -diff || { echo 'go.mod/go.sum are not tidy: run go mod tidy'; exit 1; }

bench:
	$(GO) test -run='^$$' -bench='$(BENCH)' -benchtime=$(BENCHTIME) -benchmem $(BENCHPKGS)

# CI's smoke runs: every benchmark once, at the small sizes -short picks
# where a full one takes minutes; every fuzz target for a few thousand
# inputs (a count, not a duration: Go 1.26's fuzzing coordinator can fail a
# target with "context deadline exceeded" when a duration ends while a
# worker is busy, golang/go#75804); the property tests too long for make
# test.
# The job runner bringing a service of N instances (default 1,000) to RUNNING on allot dev.
bench-jobs: build
	@scripts/bench-jobs.sh

bench-smoke:
	$(GO) test -short -count=1 -run='^$$' -bench='.' -benchtime=1x ./...

fuzz-smoke:
	$(MAKE) fuzz FUZZTIME=10000x FUZZPKGS='$(FUZZSMOKEPKGS)'

# The web UI's pages as the browser test sees them, for review.
ui-screenshots:
	mkdir -p ui-screenshots
	ALLOT_REQUIRE_BROWSER=1 ALLOT_UI_SCREENSHOTS=$(CURDIR)/ui-screenshots $(GO) test -count=1 -run '^TestUI_Browser$$' ./integration/

test-long:
	ALLOT_LONG=1 $(GO) test -race -count=1 -run '^TestP[34]_Distribution$$' ./offers/scenario/
	ALLOT_LONG=1 $(GO) test -race -count=1 -run '^TestAgent_SandboxesStayUnderBudgetAcrossJobs$$' ./executor/

# Each package's tests run once per mutant (built again each time); a
# mutant whose run takes MUTATECOEF times the plain one counts as timed out.
mutate:
	@if [ ! -x "$(GREMLINS)" ]; then \
		echo "installing gremlins $(GREMLINS_VERSION) into bin/tools"; \
		GOBIN="$(TOOLS)" $(GO) install github.com/go-gremlins/gremlins/cmd/gremlins@$(GREMLINS_VERSION); \
	fi
	@set -e; for spec in $(MUTATE); do \
		pkg=$${spec%%:*}; only=$${spec#"$$pkg"}; only=$${only#:}; ex="-E ^[^/]+/"; \
		if [ -n "$$only" ]; then \
			for f in $$pkg/*.go; do \
				b=$${f##*/}; case "$$b" in *_test.go|"$$only") ;; *) ex="$$ex -E (^|/)$$b\$$";; esac; \
			done; \
		fi; \
		echo "==> $$spec"; \
		set -f; "$(GREMLINS)" unleash --workers 1 --timeout-coefficient $(MUTATECOEF) --output-statuses lt $$ex $$pkg; set +f; \
	done

# Master and agent processes with the shipped defaults, the leader killed
# every ten seconds while 1,000 tasks run: about five minutes.
faults:
	ALLOT_FAULT_RUN=1 $(GO) test -count=1 -timeout 30m -v -run '^TestFaultRun$$' ./integration/

fuzz:
	@set -e; pkgs=$$($(GO) list $(FUZZPKGS)); for pkg in $$pkgs; do \
		list=$$($(GO) test -list '^Fuzz' $$pkg); \
		for target in $$(echo "$$list" | grep '^Fuzz' || true); do \
			echo "==> $$pkg $$target ($(FUZZTIME))"; \
			$(GO) test -run='^$$' -fuzz="^$$target\$$" -fuzztime=$(FUZZTIME) $$pkg; \
		done; \
	done

clean:
	rm -rf bin
	$(GO) clean -testcache
