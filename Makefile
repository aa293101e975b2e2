# The two commands a newcomer runs:
#   make e2e    the conformance suite on a fresh kind cluster (Kubernetes $(K8S_VERSION))
#   make test   unit tests and static checks, no cluster
# Every variable is listed in README.md.

SHELL := /bin/bash
.SHELLFLAGS := -o pipefail -ec
# ($(TEE) file) copies a command's output to a file and outlives Ctrl-C: a plain tee
# dies at once, and the command it reads from, still cleaning up after the
# interrupt, is killed by SIGPIPE at its next line (seen: a run's cluster
# left behind). So tee ignores SIGINT and ends when the command does.
TEE := trap '' INT; exec tee

K8S_VERSION  ?= 1.35
K8S_VERSIONS ?= $(K8S_VERSION)
# K8S_VERSIONS=all is every release the table supports (e2e/matrix).
ifeq ($(strip $(K8S_VERSIONS)),all)
override K8S_VERSIONS := $(shell go run ./e2e/cmd/matrix --format releases)
endif
PROFILE      ?= default
FEATURES     ?= defaults
TESTDRIVER_IMAGE ?=
# A DRA driver of your own on an existing cluster (KUBECONFIG=...): its
# name and the DeviceClass of its devices; a command that must succeed in a
# container given a device with admin access; the image the pods run.
DRIVER       ?=
DEVICE_CLASS ?=
ADMIN_CHECK  ?=
WORKLOAD_IMAGE ?=
REGISTRY     ?=
# make incluster-e2e: a pushed suite image instead of one built and pushed
# to REGISTRY; KEEP=1 keeps the Job's namespace after the run.
SUITE_IMAGE  ?=
KEEP         ?=
DRIVER_NAMESPACE ?=
REGISTRY_PORT ?= 5001
LABELS       ?=
FOCUS        ?=
SKIP         ?=
# Free text stays as given: make would take a $ in a filter, a regular
# expression or a command for a variable of its own. ADMIN_CHECK, a
# command, goes through the environment, where its quotes stay its own too.
$(foreach v,LABELS FOCUS SKIP ADMIN_CHECK,$(eval override $(v) := $$(value $(v))))
export ADMIN_CHECK WORKLOAD_IMAGE LABELS FOCUS SKIP
KEEP_CLUSTER ?=
UPGRADE      ?= 1
# make signoff and make matrix cover every DRA feature set a release lists,
# unless FEATURES is given on the command line.
SIGNOFF_FEATURES := $(if $(filter command line,$(origin FEATURES)),$(FEATURES),all)
# The next release's node image, for the in-place upgrade spec.
UPGRADE_NODE_IMAGE ?= $(if $(filter auto pull build,$(NODE_IMAGE)),$(NODE_IMAGE),auto)
CLUSTER_NAME ?= dra-e2e
NODE_IMAGE   ?= auto
PROCS        ?= 2
BENCH_REPEAT ?= 3
# Extra Ginkgo flags, e.g. GINKGO_ARGS=-v or GINKGO_ARGS="--until-it-fails".
GINKGO_ARGS  ?=
TIMEOUT      ?= 60m
ARTIFACTS    ?= $(CURDIR)/_artifacts
# A relative ARTIFACTS is the repository's: Ginkgo writes its JUnit file from
# ./e2e, and the reports and the sign-off must land in the same folder.
override ARTIFACTS := $(abspath $(ARTIFACTS))
OUT          := $(CURDIR)/_output
BIN          := $(OUT)/bin

# Only a KUBECONFIG given on the make command line selects an existing
# cluster; one merely exported in the shell never redirects the suite.
ifeq ($(origin KUBECONFIG),command line)
EXISTING := --kubeconfig=$(abspath $(KUBECONFIG))
endif


.PHONY: test preflight e2e e2e-release signoff matrix bench node-image testdriver-image testdriver-push registry-up registry-down registry-e2e vendor-e2e suite-image incluster-e2e incluster-e2e-kind cluster-up cluster-down docker-up docker-down tools e2e-tools e2e-cli clean

test:
	@unformatted=$$(gofmt -l $$(git ls-files '*.go')); \
	  if [ -n "$$unformatted" ]; then echo "gofmt would change: $$unformatted"; exit 1; fi
	go vet ./...
	go vet -tags e2e ./e2e
	go test ./...
	go tool actionlint

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

node-image: docker-up e2e-tools e2e-cli
	$(BIN)/e2e-cluster node-image --release $(K8S_VERSION) --source $(NODE_IMAGE) --out $(OUT)

testdriver-image:
	@go run ./testdriver/cmd/testdriver-image --out $(OUT)/testdriver

# testdriver-push builds the driver and workload image and pushes it to
# REGISTRY (host/path); its last line is the pushed reference, pinned by
# digest, for TESTDRIVER_IMAGE.
testdriver-push:
	@[ -n "$(REGISTRY)" ] || { echo "testdriver-push: give REGISTRY=host/path (for example localhost:$(REGISTRY_PORT)/dra after make registry-up)" >&2; exit 2; }
	@go run ./testdriver/cmd/testdriver-push --registry '$(REGISTRY)' --out $(OUT)/testdriver

# registry-up serves an OCI registry on this machine (testdriver-registry:
# the CNCF distribution registry's handler, built from its Go module). It has
# no authentication, so it listens only on the loopback at REGISTRY_PORT and,
# once kind's network exists, on that network's gateway, where kind's nodes
# reach this machine; registry-down stops it. Its data stays under
# _output/registry.
registry-up:
	@mkdir -p $(OUT)/registry $(BIN); \
	if [ -f $(OUT)/registry/pid ] && kill -0 "$$(cat $(OUT)/registry/pid)" 2>/dev/null; then echo "registry-up: serving already on localhost:$(REGISTRY_PORT)"; exit 0; fi; \
	go build -o $(BIN)/testdriver-registry ./testdriver/cmd/testdriver-registry || exit 1; \
	setsid $(BIN)/testdriver-registry --port $(REGISTRY_PORT) --root $(OUT)/registry/data > $(OUT)/registry/registry.log 2>&1 < /dev/null & echo $$! > $(OUT)/registry/pid; \
	for i in $$(seq 1 30); do \
	  if curl -fsS -o /dev/null http://localhost:$(REGISTRY_PORT)/v2/; then echo "registry-up: serving on localhost:$(REGISTRY_PORT) and, for kind's nodes, on the kind network's gateway (log: $(OUT)/registry/registry.log)"; exit 0; fi; \
	  kill -0 "$$(cat $(OUT)/registry/pid)" 2>/dev/null || break; sleep 1; \
	done; \
	echo "registry-up: the registry did not answer on localhost:$(REGISTRY_PORT) (see $(OUT)/registry/registry.log)" >&2; exit 1

# registry-e2e: the driver specs with the driver image pulled from a
# registry on this machine, and the proof that the nodes pulled it.
registry-e2e: docker-up e2e-cli
	@bash hack/registry-e2e.sh

# suite-image: the suite as an image that runs it from inside the cluster
# (e2e/cmd/incluster), with the Job and the Sonobuoy plugin that run it
# there, in _output/suite-image; the Job's environment is this make's
# variables (K8S_VERSION, LABELS, TESTDRIVER_IMAGE, DRIVER, ...).
suite-image:
	@go run ./e2e/cmd/suite-image --out $(OUT)/suite-image

# incluster-e2e: the suite run as a Job inside the cluster of KUBECONFIG,
# reached only through its API and REGISTRY (which its nodes pull from):
# build and push the images, start the Job with the variables given here,
# wait, copy the results to $(ARTIFACTS)/incluster, clean up (KEEP=1 keeps
# the Job's namespace). Only variables given on the command line or in the
# environment go into the Job: make's defaults (K8S_VERSION=1.35) would
# contradict the cluster's own release.
INCLUSTER_VARS := $(foreach v,K8S_VERSION FEATURES PROFILE LABELS FOCUS SKIP TIMEOUT TESTDRIVER_IMAGE DRIVER DEVICE_CLASS DRIVER_NAMESPACE WORKLOAD_IMAGE CLUSTER_NAME,\
  $(if $(filter command line environment environment override,$(origin $(v))),$(v)='$(value $(v))'))
incluster-e2e:
	@$(if $(EXISTING),,echo "incluster-e2e: give KUBECONFIG=path on the command line (the cluster to run in)" >&2; exit 2;) \
	go build -o $(BIN)/incluster-e2e ./e2e/cmd/incluster-e2e; \
	env $(INCLUSTER_VARS) $(BIN)/incluster-e2e --kubeconfig '$(abspath $(KUBECONFIG))' \
	  --registry '$(REGISTRY)' --suite-image '$(SUITE_IMAGE)' --artifacts $(ARTIFACTS)/incluster --out $(OUT) $(if $(filter 1,$(KEEP)),--keep)

# incluster-e2e-kind: the proof of incluster-e2e on a kind cluster treated as
# a managed one (hack/incluster-e2e.sh): a registry on this machine, and the
# cluster reached only through its kubeconfig.
incluster-e2e-kind: docker-up e2e-cli
	@bash hack/incluster-e2e.sh

# vendor-e2e: the specs that hold for any driver, run with DRIVER and
# DEVICE_CLASS against upstream's DRA test driver on a kind cluster.
vendor-e2e: docker-up e2e-cli
	@bash hack/vendor-e2e.sh

registry-down:
	@if [ -f $(OUT)/registry/pid ]; then kill "$$(cat $(OUT)/registry/pid)" 2>/dev/null || true; rm -f $(OUT)/registry/pid; echo "registry-down: stopped"; fi

cluster-up: docker-up e2e-tools e2e-cli
	$(BIN)/e2e-cluster up --release $(K8S_VERSION) --profile $(PROFILE) --features $(FEATURES) --name $(CLUSTER_NAME) --source $(NODE_IMAGE) --out $(OUT) \
	  --kubeconfig $(OUT)/kubeconfig-$(CLUSTER_NAME)

cluster-down: e2e-cli
	$(BIN)/e2e-cluster down --name $(CLUSTER_NAME)

# preflight refuses a bad variable in seconds, before anything is installed or built.
preflight:
	@go build -o $(BIN)/preflight ./e2e/cmd/preflight
	@$(BIN)/preflight --releases '$(K8S_VERSIONS)' --profile '$(PROFILE)' --features '$(FEATURES)' --testdriver-image '$(TESTDRIVER_IMAGE)' --labels '$(LABELS)' \
	  --focus '$(FOCUS)' --skip '$(SKIP)' --node-image '$(NODE_IMAGE)' --upgrade-node-image '$(UPGRADE_NODE_IMAGE)' \
	  --cluster-name '$(CLUSTER_NAME)' --keep-cluster '$(KEEP_CLUSTER)' --upgrade '$(UPGRADE)' \
	  --timeout '$(TIMEOUT)' --procs '$(PROCS)' --driver '$(DRIVER)' --device-class '$(DEVICE_CLASS)' --driver-namespace '$(DRIVER_NAMESPACE)' \
	  --workload-image '$(WORKLOAD_IMAGE)' --admin-check "$$ADMIN_CHECK" $(EXISTING)

# DEVICE_CLASS=a,b (with DRIVER): each class is a run of its own, its report
# in $(ARTIFACTS)/classes/<class>, and a column of its own in the sign-off.
comma := ,
CLASSES := $(if $(findstring $(comma),$(DEVICE_CLASS)),$(subst $(comma), ,$(DEVICE_CLASS)))

# e2e runs every release of K8S_VERSIONS in turn and fails if any failed;
# Ctrl-C ends the release that runs (Ginkgo cleans up) and runs no other.
# Against an existing cluster (KUBECONFIG=...) it touches no Docker set-up.
e2e: preflight $(if $(EXISTING),,docker-up e2e-tools) e2e-cli
	@failed=""; interrupted=""; trap 'interrupted=1' INT; \
	$(if $(CLASSES),rm -rf $(ARTIFACTS)/classes;) \
	for v in $(K8S_VERSIONS); do \
	  [ -z "$$interrupted" ] || break; \
	  echo "=== e2e: Kubernetes $$v, profile $(PROFILE), DRA feature set $(FEATURES)"; \
	  name=$(CLUSTER_NAME); \
	  $(if $(and $(filter 1,$(KEEP_CLUSTER)),$(word 2,$(K8S_VERSIONS)),$(if $(EXISTING),,x)),name=$(CLUSTER_NAME)-$${v//./-}; echo "e2e: KEEP_CLUSTER=1 with several releases: this one's cluster is $$name";) \
	  $(if $(CLASSES),for c in $(CLASSES); do \
	    [ -z "$$interrupted" ] || break; echo "=== e2e: DEVICE_CLASS=$$c"; \
	    $(MAKE) --no-print-directory e2e-release K8S_VERSION=$$v CLUSTER_NAME=$$name DEVICE_CLASS=$$c ARTIFACTS=$(ARTIFACTS)/classes/$$c || failed="$$failed $$v (class $$c)"; \
	  done;,$(MAKE) --no-print-directory e2e-release K8S_VERSION=$$v CLUSTER_NAME=$$name || failed="$$failed $$v";) \
	done; \
	signed=0; go build -o $(BIN)/signoff ./e2e/cmd/signoff; $(BIN)/signoff $(if $(CLASSES),--cells $(ARTIFACTS)/classes --out $(ARTIFACTS),--artifacts $(ARTIFACTS)) \
	  --releases '$(K8S_VERSIONS)' --features '$(FEATURES)' || signed=$$?; \
	if [ -n "$$interrupted" ]; then echo "e2e: interrupted; releases after it were not run"; exit 130; fi; \
	if [ -n "$$failed" ]; then echo "e2e: failed for Kubernetes$$failed (reports in $(ARTIFACTS))"; exit 1; fi; \
	case $$signed in \
	  0) ;; \
	  3) echo "e2e: what ran passed (exit 0), but it is not a sign-off: the verdict above says what was left out";; \
	  *) echo "e2e: the specs passed, but the sign-off failed (exit 1): the verdict above says why"; exit 1;; \
	esac

# The sign-off matrix (e2e/matrix): every column (release x DRA feature
# set, with its allocator) and its cells, as CI runs them: every release,
# unless K8S_VERSION(S) is given on the command line.
matrix:
	@go run ./e2e/cmd/matrix --releases '$(if $(filter command line,$(origin K8S_VERSIONS) $(origin K8S_VERSION)),$(K8S_VERSIONS),all)' \
	  --features '$(SIGNOFF_FEATURES)' --labels '$(LABELS)'

# signoff runs every column of K8S_VERSIONS (each DRA feature set a release
# lists, or FEATURES=... given on the command line) one after another on this
# machine, each on one cluster of its own with the label filter its cells
# select together, and writes the merged sign-off (signoff.md, .html, .json)
# in $(ARTIFACTS)/signoff. Ctrl-C ends the column that runs and runs no other.
signoff: preflight docker-up e2e-tools e2e-cli
	@dir=$(ARTIFACTS)/signoff; rm -rf $$dir; mkdir -p $$dir/cells; \
	columns=$$(go run ./e2e/cmd/matrix --format columns --releases '$(K8S_VERSIONS)' --features '$(SIGNOFF_FEATURES)' --labels '$(LABELS)'); \
	start=$$(date +%s); failed=""; interrupted=""; trap 'interrupted=1' INT; \
	while IFS=$$'\t' read -r rel features allocator labels; do \
	  [ -z "$$interrupted" ] || break; \
	  echo "=== signoff: Kubernetes $$rel, DRA feature set $$features (allocator $$allocator)"; t=$$(date +%s); \
	  $(MAKE) --no-print-directory e2e-release K8S_VERSION=$$rel FEATURES=$$features LABELS="$$labels" ARTIFACTS=$$dir/cells/$$rel-$$features \
	    || failed="$$failed, $$rel $$features"; \
	  printf '%s\t%s\t%s\n' "$$rel" "$$features" "$$(( $$(date +%s) - t ))" >> $$dir/seconds.tsv; \
	done <<< "$$columns"; \
	echo "signoff: $$(wc -l < $$dir/seconds.tsv) columns in $$(( $$(date +%s) - start )) s (per column: $$dir/seconds.tsv)"; \
	rc=0; go build -o $(BIN)/signoff ./e2e/cmd/signoff; $(BIN)/signoff --cells $$dir/cells --releases '$(K8S_VERSIONS)' --features '$(SIGNOFF_FEATURES)' --out $$dir || rc=$$?; \
	if [ -n "$$interrupted" ]; then echo "signoff: interrupted; columns after it were not run"; exit 130; fi; \
	if [ -n "$$failed" ]; then echo "signoff: failed for$${failed#,}"; fi; exit $$rc

# One release. Docker is already up (e2e brought it up once for all releases).
e2e-release: e2e-cli
	@set -e; \
	timeline=$(OUT)/timeline-$(K8S_VERSION).tsv; : > $$timeline; \
	ms() { echo $$(( ($$(date +%s%N) - $$1) / 1000000 )); }; \
	if [ -z "$(EXISTING)" ]; then \
	  t=$$(date +%s%N); \
	  $(BIN)/e2e-cluster node-image --release $(K8S_VERSION) --source $(NODE_IMAGE) --out $(OUT) | ($(TEE) $(OUT)/node-image.out); \
	  image=$$(tail -n 1 $(OUT)/node-image.out); \
	  printf 'node image %s\t%s\n' "$$image" "$$(ms $$t)" >> $$timeline; \
	else image=none; fi; \
	upgrade=none; \
	if [ -z "$(EXISTING)" ] && [ "$(UPGRADE)" != 0 ]; then \
	  t=$$(date +%s%N); \
	  $(BIN)/e2e-cluster upgrade-image --release $(K8S_VERSION) --features $(FEATURES) --labels '$(LABELS)' --source $(UPGRADE_NODE_IMAGE) --out $(OUT) | ($(TEE) $(OUT)/upgrade-image.out); \
	  upgrade=$$(tail -n 1 $(OUT)/upgrade-image.out); \
	  printf 'next release node image %s\t%s\n' "$$upgrade" "$$(ms $$t)" >> $$timeline; \
	fi; \
	t=$$(date +%s%N); \
	if [ -n "$(TESTDRIVER_IMAGE)" ]; then tag='$(TESTDRIVER_IMAGE)' archive=; \
	else read -r tag archive < <(go run ./testdriver/cmd/testdriver-image --out $(OUT)/testdriver); fi; \
	printf 'test driver image %s\t%s\n' "$$tag" "$$(ms $$t)" >> $$timeline; \
	echo "e2e: test driver image $$tag"; \
	rm -rf $(ARTIFACTS)/$(K8S_VERSION); mkdir -p $(ARTIFACTS)/$(K8S_VERSION); \
	go tool ginkgo -p --procs=$(PROCS) --timeout=$(TIMEOUT) --fail-on-empty --tags=e2e $(GINKGO_ARGS) \
	  $(if $(LABELS),--label-filter='$(LABELS)') $(if $(FOCUS),--focus='$(FOCUS)') $(if $(SKIP),--skip='$(SKIP)') \
	  --junit-report=junit.xml --json-report=ginkgo-report.json --output-dir=$(ARTIFACTS)/$(K8S_VERSION) \
	  ./e2e -- --release=$(K8S_VERSION) --profile=$(PROFILE) --features=$(FEATURES) --cluster-name=$(CLUSTER_NAME) --node-image=$$image \
	  --upgrade-node-image=$$([ "$$upgrade" = none ] || echo "$$upgrade") \
	  --testdriver-archive=$$archive --testdriver-tag=$$tag --testdriver-image='$(TESTDRIVER_IMAGE)' --artifacts=$(ARTIFACTS)/$(K8S_VERSION) \
	  --timeline-file=$$timeline --driver='$(DRIVER)' --device-class='$(DEVICE_CLASS)' --driver-namespace='$(DRIVER_NAMESPACE)' \
	  --source-root=$(CURDIR) --output-dir=$(OUT) $(EXISTING) $(if $(filter 1,$(KEEP_CLUSTER)),--keep-cluster) \
	  2>&1 | ($(TEE) $(ARTIFACTS)/$(K8S_VERSION)/e2e.log)

# bench: one whole run of the release with its cluster kept, then each
# component's gate moved off and on BENCH_REPEAT times on that cluster, then
# the table (also in $(ARTIFACTS)/bench/<release>/bench.md). The cluster is
# deleted at the end, unless KEEP_CLUSTER=1.
bench: preflight docker-up e2e-tools e2e-cli
	@rc=0; $(MAKE) --no-print-directory e2e-release KEEP_CLUSTER=1 ARTIFACTS=$(ARTIFACTS)/bench || rc=$$?; \
	go run ./e2e/cmd/bench --report $(ARTIFACTS)/bench/$(K8S_VERSION)/report.json --cluster $(CLUSTER_NAME) --features $(FEATURES) \
	  --release $(K8S_VERSION) --repeat $(BENCH_REPEAT) --out $(ARTIFACTS)/bench/$(K8S_VERSION)/bench.md || rc=1; \
	$(if $(filter 1,$(KEEP_CLUSTER)),echo "bench: cluster $(CLUSTER_NAME) kept (KEEP_CLUSTER=1)",$(BIN)/e2e-cluster down --name $(CLUSTER_NAME)); exit $$rc

clean:
	rm -rf $(OUT) $(ARTIFACTS)
