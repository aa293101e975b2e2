#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# registry-e2e.sh: the proof that TESTDRIVER_IMAGE works. It serves a real
# OCI registry on this machine (make registry-up: the CNCF distribution
# registry, built from its Go module), pushes the driver and workload image
# to it (make testdriver-push), runs the driver specs on a kind cluster
# whose nodes pull that image from the registry, and then checks that they
# did: each node holds the image under the registry's name and none under
# the archive's, and the registry logged the nodes' pulls. Everything it
# made is removed at the end, whatever happened.
#
# Needs Docker up and the release's node image (NODE_IMAGE, default present).
set -euo pipefail
cd "$(dirname "$0")/.."
name=${CLUSTER_NAME:-registry-e2e}
port=${REGISTRY_PORT:-5001}
artifacts=${ARTIFACTS:-$PWD/_artifacts/registry-e2e}

# A registry the user already runs is theirs: used, counted from here on,
# and left running.
ours=1
if [ -f _output/registry/pid ] && kill -0 "$(cat _output/registry/pid)" 2>/dev/null; then ours=0; fi
cleanup() {
	make --no-print-directory cluster-down CLUSTER_NAME="$name" >/dev/null 2>&1 || true
	[ "$ours" = 0 ] || make --no-print-directory registry-down REGISTRY_PORT="$port" >/dev/null 2>&1 || true
}
trap cleanup EXIT

make --no-print-directory registry-up REGISTRY_PORT="$port"
ref=$(make --no-print-directory -s testdriver-push REGISTRY="localhost:$port/dra" | tail -n 1)
echo "registry-e2e: pushed $ref"
# Only the requests from here on (the nodes') count as pulls: not the
# push's own, nor an earlier run's in a registry the user keeps.
seen=$(wc -l <_output/registry/registry.log)

rc=0
# K8S_VERSION, where set, reaches the run from the environment.
make --no-print-directory e2e NODE_IMAGE="${NODE_IMAGE:-present}" UPGRADE=0 \
	LABELS='driver || smoke' TESTDRIVER_IMAGE="$ref" KEEP_CLUSTER=1 CLUSTER_NAME="$name" ARTIFACTS="$artifacts" || rc=$?

failed=0
repo=${ref%@*}
repo=${repo%:*}
for node in $(docker ps --filter "label=io.x-k8s.kind.cluster=$name" --format '{{.Names}}'); do
	images=$(docker exec "$node" ctr -n k8s.io images ls -q)
	if ! grep -q "^$repo" <<<"$images"; then
		echo "registry-e2e: $node holds no image of $repo" >&2
		failed=1
	fi
	# containerd lists a loaded archive's image under its normalised name
	# (docker.io/kind-e2e/testdriver:...), so both spellings count.
	if grep -Eq '^(docker\.io/)?kind-e2e/testdriver' <<<"$images"; then
		echo "registry-e2e: $node holds the archive's kind-e2e/testdriver: it was loaded, not pulled" >&2
		failed=1
	fi
	echo "registry-e2e: $node: $(grep -c "^$repo" <<<"$images") image name(s) of $repo"
done
pulls=$(tail -n +"$((seen + 1))" _output/registry/registry.log | grep -c 'GET /v2/dra/testdriver/manifests' || true)
echo "registry-e2e: the registry served $pulls manifest request(s) for dra/testdriver"
[ "$pulls" -gt 0 ] || failed=1
[ "$rc" = 0 ] && [ "$failed" = 0 ] && echo "registry-e2e: passed" && exit 0
echo "registry-e2e: failed (make e2e exited $rc)" >&2
exit 1
