#!/usr/bin/env bash
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
release=${K8S_VERSION:-1.35}
name=${CLUSTER_NAME:-registry-e2e}
port=${REGISTRY_PORT:-5001}
artifacts=${ARTIFACTS:-$PWD/_artifacts/registry-e2e}

cleanup() {
	make --no-print-directory cluster-down CLUSTER_NAME="$name" >/dev/null 2>&1 || true
	make --no-print-directory registry-down REGISTRY_PORT="$port" >/dev/null 2>&1 || true
}
trap cleanup EXIT

make --no-print-directory registry-up REGISTRY_PORT="$port"
ref=$(make --no-print-directory -s testdriver-push REGISTRY="localhost:$port/dra" | tail -n 1)
echo "registry-e2e: pushed $ref"

rc=0
make --no-print-directory e2e K8S_VERSION="$release" NODE_IMAGE="${NODE_IMAGE:-present}" UPGRADE=0 \
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
	if grep -q '^kind-e2e/testdriver' <<<"$images"; then
		echo "registry-e2e: $node holds the archive's kind-e2e/testdriver: it was loaded, not pulled" >&2
		failed=1
	fi
	echo "registry-e2e: $node: $(grep -c "^$repo" <<<"$images") image name(s) of $repo"
done
pulls=$(grep -c 'GET /v2/dra/testdriver/manifests' _output/registry/registry.log || true)
echo "registry-e2e: the registry served $pulls manifest request(s) for dra/testdriver"
[ "$pulls" -gt 0 ] || failed=1
[ "$rc" = 0 ] && [ "$failed" = 0 ] && echo "registry-e2e: passed" && exit 0
echo "registry-e2e: failed (make e2e exited $rc)" >&2
exit 1
