# The two commands a newcomer runs:
#   make e2e    the conformance suite on a fresh kind cluster (the release K8S_VERSION names)
#   make test   unit tests and static checks, no cluster
# Every variable is listed in docs/variables.md, and defined once, in
# e2e/variables (its name, default and meaning; its check in e2e/run). A
# run is one Go command, e2e/cmd/run; this file names the targets and hands
# it the variables.

SHELL := /bin/bash
.SHELLFLAGS := -o pipefail -ec
OUT := $(CURDIR)/_output
BIN := $(OUT)/bin

# The hand-over, once for every target: each variable given on the command
# line goes into the recipes' environment as given (a $ in a filter, a
# regular expression or ADMIN_CHECK's command stays its own), beside those
# of the environment, and the runner reads both there. --given names those
# of the command line: only a KUBECONFIG given there selects an existing
# cluster (one merely exported in a shell never redirects the suite), and
# make signoff and make matrix cover every release and feature set unless
# told which.
GIVEN := $(strip $(foreach v,$(.VARIABLES),$(if $(filter command line,$(origin $(v))),$(v))))
EXISTING := $(filter KUBECONFIG,$(GIVEN))
$(foreach v,$(GIVEN),$(eval override $(v) := $$(value $(v))))
export $(GIVEN)
# MAKE_STARTED (whole seconds, which every date prints) lets the first
# release's timeline show the time before its steps: on a fresh machine,
# compiling the runner and installing Docker.
MAKE_STARTED := $(shell date +%s)
RUN = $(BIN)/run --given '$(GIVEN)' --make-started $(MAKE_STARTED)

# Every go command here compiles with the project's one set of settings
# (clusters/gobuild, whose comment says why; a test keeps these lines equal
# to it): the runner, e2e-cluster, make test's packages, the driver's image,
# the suite and the node image's builds then share one build cache, and a
# cold machine compiles the standard library and the shared modules once.
# GOFLAGS keeps what the user set (go env -w included).
export CGO_ENABLED := 0
export GOFLAGS := $(strip $(shell go env GOFLAGS 2>/dev/null) -trimpath -gcflags=all=-dwarf=false)

.PHONY: test preflight e2e e2e-release signoff matrix images bench node-image node-image-tag testdriver-image testdriver-push registry-up registry-down registry-e2e vendor-e2e suite-image incluster-e2e incluster-e2e-kind cluster-up cluster-down docker-up docker-down tools e2e-tools e2e-cli run-cli variables deps-check clean

# actionlint checks the workflow's run: scripts with shellcheck only where
# shellcheck is on PATH, as it is on a hosted runner: here too (make tools
# installs it), or a lint that fails on GitHub passes here. Where it is
# missing, test says so; SHELLCHECK=required (CI) fails instead.
test:
	@unformatted=$$(gofmt -l $$(git ls-files '*.go')); \
	  if [ -n "$$unformatted" ]; then echo "gofmt would change: $$unformatted"; exit 1; fi
	go vet ./...
	go vet -tags e2e ./e2e
	go test ./...
	@if ! command -v shellcheck >/dev/null 2>&1; then \
	  if [ "$$SHELLCHECK" = required ]; then echo "SHELLCHECK=required, and no shellcheck is on PATH (make tools installs it)" >&2; exit 1; fi; \
	  echo "make test: no shellcheck on PATH: actionlint skips the workflow's run: scripts, which a hosted runner checks, and hack/'s scripts go unchecked (make tools installs it)"; \
	else shellcheck -S warning hack/*.sh .ci/run; fi
	go tool actionlint

# deps-check: each direct requirement of go.mod (and each go tool's module)
# behind the newest version the module proxy serves, one "module current ->
# newest" line each, failing when one is; k8s.io/kubernetes, the staging
# modules its replace lines pin and kind are listed apart as pinned on
# purpose (ARCHITECTURE.md). It asks the network, so test never runs it.
# Built, not go run, so that its 2 (it could not tell) stays 2.
deps-check:
	@go build -o $(BIN)/deps-check ./hack/deps-check
	@$(BIN)/deps-check

docker-up:
	@hack/docker-up.sh

# Stops the dockerd docker-up started and restores the daemon.json it replaced.
docker-down:
	@hack/docker-down.sh

tools:
	@hack/install-tools.sh

# What make e2e needs of the host beyond Go and Docker (debootstrap); the
# browser make test renders the sign-off in comes only with make tools.
e2e-tools:
	@hack/install-tools.sh e2e

e2e-cli:
	@go build -o $(BIN)/e2e-cluster ./clusters/cmd/e2e-cluster

# The runner is built and run, not go run: go run turns every exit code
# into 1, and 2 (a refused variable), 3 and 130 say more.
run-cli:
	@go build -o $(BIN)/run ./e2e/cmd/run

# preflight refuses a bad variable in seconds, before anything is installed
# or built: e2e, signoff and bench run it before docker-up, and the runner
# again as its first step, once Docker answers.
preflight: run-cli
	@$(RUN) preflight

# e2e runs every release of K8S_VERSIONS in turn and fails if any failed;
# Ctrl-C ends the release that runs (Ginkgo cleans up) and runs no other.
# Against an existing cluster (KUBECONFIG=...) it touches no Docker set-up.
e2e: preflight $(if $(EXISTING),,docker-up e2e-tools) e2e-cli
	@$(RUN) e2e

# One release, K8S_VERSION, without preflight or sign-off.
e2e-release: run-cli e2e-cli
	@$(RUN) e2e-release

# signoff runs every column of K8S_VERSIONS (each DRA feature set a release
# lists, or FEATURES=... given on the command line) one after another on this
# machine, each on one cluster of its own with the label filter its cells
# select together, and writes the merged sign-off (signoff.md, .html, .json)
# in $(ARTIFACTS)/signoff. Ctrl-C ends the column that runs and runs no other.
signoff: preflight docker-up e2e-tools e2e-cli
	@$(RUN) signoff

# bench: one whole run of the release with its cluster kept, then each
# component's gate moved off and on BENCH_REPEAT times on that cluster, then
# the table (also in $(ARTIFACTS)/bench/<release>/bench.md). The cluster is
# deleted at the end, unless KEEP_CLUSTER=1.
bench: preflight docker-up e2e-tools e2e-cli
	@$(RUN) bench

# The sign-off matrix (e2e/matrix): every column (release x DRA feature
# set, with its allocator) and its cells, as CI runs them: every release,
# unless K8S_VERSION(S) is given on the command line.
matrix: run-cli
	@$(RUN) matrix

# The variables' table, as docs/variables.md has it.
variables: run-cli
	@$(RUN) variables

# Every image a run of K8S_VERSIONS pulls, and each it makes here instead
# (an offline-built node image, the bundled driver), one a line under a #
# line saying which: what to mirror where the nodes cannot reach the
# internet. Names the offline build's images from its recipe (downloading
# the release's Kubernetes module where needed) and compiles the driver's
# image for its tag; builds no node image.
images: run-cli
	@$(RUN) images

node-image: run-cli docker-up e2e-tools e2e-cli
	@$(RUN) node-image

# The tag make node-image gives K8S_VERSION's offline-built node image, a
# hash of its recipe, alone on stdout (downloading the release's Kubernetes
# module where needed; nothing is built): the CI workflow's cache key.
node-image-tag: run-cli
	@$(RUN) node-image-tag

testdriver-image:
	@go run ./testdriver/cmd/testdriver-image --out $(OUT)/testdriver

# testdriver-push builds the driver and workload image and pushes it to
# REGISTRY (host/path); its last line is the pushed reference, pinned by
# digest, for TESTDRIVER_IMAGE.
testdriver-push: run-cli
	@$(RUN) testdriver-push

# registry-up serves an OCI registry on this machine at REGISTRY_PORT (on
# the loopback, and on the kind network's gateway for kind's nodes: it has
# no authentication); registry-down stops it. Its data stays under
# _output/registry.
registry-up: run-cli
	@$(RUN) registry-up

registry-down: run-cli
	@$(RUN) registry-down

# registry-e2e: the driver specs with the driver image pulled from a
# registry on this machine, and the proof that the nodes pulled it.
registry-e2e: docker-up e2e-cli
	@bash hack/registry-e2e.sh

# suite-image: the suite as an image that runs it from inside the cluster
# (e2e/cmd/incluster), with the Job and the Sonobuoy plugin that run it
# there, in _output/suite-image; the Job's environment is the variables
# given here (K8S_VERSION, LABELS, TESTDRIVER_IMAGE, DRIVER, ...).
suite-image:
	@go run ./e2e/cmd/suite-image --out $(OUT)/suite-image

# incluster-e2e: the suite run as a Job inside the cluster of KUBECONFIG,
# reached only through its API and REGISTRY (which its nodes pull from):
# build and push the images, start the Job with the variables given here,
# wait, copy the results to $(ARTIFACTS)/incluster, clean up (KEEP=1 keeps
# the Job's namespace).
incluster-e2e: run-cli
	@$(RUN) incluster-e2e

# incluster-e2e-kind: the proof of incluster-e2e on a kind cluster treated as
# a managed one (hack/incluster-e2e.sh): a registry on this machine, and the
# cluster reached only through its kubeconfig.
incluster-e2e-kind: docker-up e2e-cli
	@bash hack/incluster-e2e.sh

# vendor-e2e: the specs that hold for any driver, run with DRIVER and
# DEVICE_CLASS against upstream's DRA test driver on a kind cluster.
vendor-e2e: docker-up e2e-cli
	@bash hack/vendor-e2e.sh

cluster-up: run-cli docker-up e2e-tools e2e-cli
	@$(RUN) cluster-up

cluster-down: run-cli e2e-cli
	@$(RUN) cluster-down

# The build output and ARTIFACTS.
clean: run-cli
	@$(RUN) clean
