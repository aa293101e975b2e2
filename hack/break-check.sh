#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# break-check.sh STAGE: a cluster broken on purpose under a run of make e2e
# (issue 59, item 4), and how the run names it. It starts the run, waits
# for its first spec to finish, breaks the cluster as the stage says, lets
# the run end, and prints the wall time, make's and the sign-off's exit
# codes, the report's breaks and its totals, and what the run left that
# was not there before (containers of the run's name).
#
#   node        the worker stopped (docker stop <cluster>-worker): a break,
#               "node <cluster>-worker NotReady ... from ...", sign-off exit 4
#   scheduler   kube-scheduler's manifest moved out of the kubelet's folder
#               (it stays down): a break, "kube-scheduler on ... not running
#               (its mirror pod is gone)", sign-off exit 4
#   driver      the driver's pod on the worker deleted mid-spec: the
#               DaemonSet replaces it within the grace, so no break, and
#               the run passes as it would have
#   driver-gone the driver's DaemonSet kept from every node (a nodeSelector
#               no node has): a break, "the driver's pod on ... not ready",
#               sign-off exit 4
#   gate        nothing broken: LABELS=toggle, whose spec restarts every
#               component itself; no break may be named, the run passes
#
# Needs Docker up (make docker-up) and the 1.35 node image (NODE_IMAGE=present);
# one cluster at a time, as every run here.
set -uo pipefail
stage=${1:?usage: hack/break-check.sh node|scheduler|driver|driver-gone|gate}
cd "$(dirname "$0")/.." || exit 1
name=bc-$stage
artifacts=$PWD/_output/break/artifacts-$stage
log=${LOG_DIR:-_output/break}/$stage.log
mkdir -p "$(dirname "$log")"
labels="allocation || authz"
case $stage in
node | scheduler | driver-gone) ;;
driver) labels=driver ;;
gate) labels=toggle ;;
*)
	echo "break-check: unknown stage $stage" >&2
	exit 2
	;;
esac
kubectl_cp() { docker exec "$name-control-plane" kubectl --kubeconfig /etc/kubernetes/admin.conf "$@"; }
containers() { docker ps -a --format '{{.Names}}' | grep "^$name-" | sort; }

start=$(date +%s)
make --no-print-directory e2e K8S_VERSION=1.35 NODE_IMAGE=present UPGRADE=0 LABELS="$labels" \
	CLUSTER_NAME="$name" ARTIFACTS="$artifacts" >"$log" 2>&1 &
pid=$!
until grep -q ' passed, ' "$log"; do
	if ! kill -0 "$pid" 2>/dev/null; then
		echo "break-check: the run ended before its first spec finished (see $log)" >&2
		exit 2
	fi
	sleep 1
done
at=$(($(date +%s) - start))
case $stage in
node) docker stop "$name-worker" >/dev/null ;;
scheduler) docker exec "$name-control-plane" mv /etc/kubernetes/manifests/kube-scheduler.yaml /etc/kubernetes/kube-scheduler.yaml.held ;;
driver) kubectl_cp -n dra-testdriver delete pod --field-selector "spec.nodeName=$name-worker" --wait=false ;;
driver-gone) kubectl_cp -n dra-testdriver patch daemonset testdriver --type merge -p '{"spec":{"template":{"spec":{"nodeSelector":{"break-check":"none"}}}}}' ;;
gate) ;;
esac
wait "$pid"
rc=$?
took=$(($(date +%s) - start))

echo "break-check $stage: broken ${at}s into the run; make exited $rc after ${took}s"
grep -h -E '^e2e: the cluster broke|^e2e: [0-9]+ passed|NOT signed off|^Signed off|exit 4' "$log" | sed 's/^/  /'
report=$(find "$artifacts" -name report.md -not -path '*/cells/*' | head -1)
[ -n "$report" ] && grep -h -E 'The cluster broke under the run|^\*\*[0-9]+ passed' "$report" | sed 's/^/  report.md: /'
grep -h '"exitCode"' "$artifacts/signoff.json" 2>/dev/null | sed 's/^ */  signoff.json: /'
left=$(containers)
if [ -n "$left" ]; then
	printf '  containers left:\n%s\n' "$(sed 's/^/    /' <<<"$left")"
	exit 1
fi
echo "  nothing left"
