#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# incluster-e2e.sh: the proof that make incluster-e2e works where only the
# API and a registry are reachable, as on a managed cluster. It serves a
# registry on this machine (make registry-up), makes a kind cluster whose
# nodes pull from it, and then treats that cluster as managed: the run below
# gets only its kubeconfig and REGISTRY (no Docker, no node exec). Its
# control-plane node keeps kubeadm's NoSchedule taint, which nothing of the
# run tolerates; the proof checks that no pod of the run was placed there.
# Everything it made is removed at the end, whatever happened.
#
# Needs Docker up and the release's node image (NODE_IMAGE, default present).
set -euo pipefail
cd "$(dirname "$0")/.."
release=${K8S_VERSION:-1.35}
name=${CLUSTER_NAME:-incluster-e2e}
port=${REGISTRY_PORT:-5001}
artifacts=${ARTIFACTS:-$PWD/_artifacts/incluster-e2e}
kubeconfig=$PWD/_output/kubeconfig-$name

if [ -n "$(docker ps -aq --filter "label=io.x-k8s.kind.cluster=$name")" ]; then
	echo "incluster-e2e: a kind cluster named $name exists already; set CLUSTER_NAME to another name" >&2
	exit 1
fi
ours=1
if [ -f _output/registry/pid ] && kill -0 "$(cat _output/registry/pid)" 2>/dev/null; then ours=0; fi
watcher=""
cleanup() {
	[ -z "$watcher" ] || kill "$watcher" 2>/dev/null || true
	_output/bin/e2e-cluster down --name "$name" >/dev/null 2>&1 || true
	[ "$ours" = 0 ] || make --no-print-directory registry-down REGISTRY_PORT="$port" >/dev/null 2>&1 || true
	rm -f "$kubeconfig"
}
trap cleanup EXIT

make --no-print-directory registry-up REGISTRY_PORT="$port"
_output/bin/e2e-cluster up --release "$release" --name "$name" --source "${NODE_IMAGE:-present}" --out _output \
	--kubeconfig "$kubeconfig" --registry "localhost:$port"
kc() { docker exec -i "$name-control-plane" kubectl --kubeconfig /etc/kubernetes/admin.conf "$@"; }
cp_node=$name-control-plane
taints=$(kc get node "$cp_node" -o jsonpath='{range .spec.taints[*]}{.key}:{.effect} {end}')
echo "incluster-e2e: control-plane node $cp_node is tainted: ${taints:-nothing}"
case "$taints" in *node-role.kubernetes.io/control-plane:NoSchedule*) ;; *)
	echo "incluster-e2e: the control-plane node has no NoSchedule taint; the proof needs one" >&2
	exit 1
	;;
esac

# Every pod placed on the control-plane node while the run goes, but the
# cluster's own (kube-system, the pod network's): none may be the run's.
# The watch is the proof's, not the run's: it reads the API as the run's
# user would.
placed=$artifacts/pods-on-control-plane.txt
mkdir -p "$artifacts"
: >"$placed"
kc get pods -A -w --field-selector "spec.nodeName=$cp_node" -o custom-columns=NS:.metadata.namespace,NAME:.metadata.name --no-headers >"$placed" 2>/dev/null &
watcher=$!

rc=0
make --no-print-directory incluster-e2e KUBECONFIG="$kubeconfig" REGISTRY="localhost:$port/dra" \
	LABELS="${LABELS:-}" ARTIFACTS="$artifacts" || rc=$?
kill "$watcher" 2>/dev/null || true
watcher=""

failed=0
theirs=$(awk '$1 != "kube-system" && $1 != "local-path-storage" {print $1 "/" $2}' "$placed" | sort -u)
if [ -n "$theirs" ]; then
	echo "incluster-e2e: pods of the run were placed on the control-plane node: $(tr '\n' ' ' <<<"$theirs")" >&2
	failed=1
else
	echo "incluster-e2e: no pod of the run was placed on the control-plane node"
fi
for f in "$release/junit.xml" "$release/report.json" "$release/report.md" signoff.md "done"; do
	[ -f "$artifacts/incluster/results/$f" ] || { echo "incluster-e2e: no $f in the results" >&2; failed=1; }
done
[ "$rc" = 0 ] && [ "$failed" = 0 ] && echo "incluster-e2e: passed" && exit 0
echo "incluster-e2e: failed (make incluster-e2e exited $rc)" >&2
exit 1
