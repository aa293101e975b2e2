#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# interrupt-check.sh STAGE: what Ctrl-C leaves behind, one stage of a run at a
# time. It starts `make e2e` in a process group of its own, waits for the
# stage, sends SIGINT to the whole group (what a terminal's Ctrl-C does),
# and then lists what the run left that was not there before: containers,
# mounts, processes of the run's kinds, and, against an existing cluster, the
# driver's namespaces. It exits 1 when anything was left.
#
#   build     the offline node image build, compiling (K8S_VERSION=1.33, NODE_IMAGE=build:
#             kind publishes no 1.33 image, so that build is the one users meet)
#   assemble  the same build, its privileged build container running (minutes in)
#   create    kind creating the cluster (its control-plane container exists)
#   specs     the specs (the first has finished)
#   upgrade   the in-place upgrade (kube-apiserver's manifest names the next release)
#   existing  the specs against an existing cluster made for the check (then deleted)
#
# Needs Docker up (make docker-up) and the node images the stage boots
# (NODE_IMAGE=present); one cluster at a time, as every run here.
set -uo pipefail
stage=${1:?usage: hack/interrupt-check.sh build|assemble|create|specs|upgrade|existing}
cd "$(dirname "$0")/.." || exit 1
name=ic-$stage
log=${LOG_DIR:-_output/interrupt}/$stage.log
mkdir -p "$(dirname "$log")"
args=(K8S_VERSION=1.35 NODE_IMAGE=present UPGRADE=0 CLUSTER_NAME="$name" ARTIFACTS="$PWD/_output/interrupt/artifacts-$stage")
existing=""
case $stage in
build | assemble) args=(K8S_VERSION=1.33 NODE_IMAGE=build UPGRADE=0 CLUSTER_NAME="$name" ARTIFACTS="$PWD/_output/interrupt/artifacts-$stage") ;;
create | specs) ;;
upgrade) args=(K8S_VERSION=1.35 NODE_IMAGE=present UPGRADE_NODE_IMAGE=present LABELS=upgrade CLUSTER_NAME="$name" ARTIFACTS="$PWD/_output/interrupt/artifacts-$stage") ;;
existing)
	# The cluster made for the check goes whichever way the check ends.
	trap 'make --no-print-directory cluster-down CLUSTER_NAME="$name" >/dev/null 2>&1' EXIT
	make --no-print-directory cluster-up K8S_VERSION=1.35 NODE_IMAGE=present CLUSTER_NAME="$name" >"$log.cluster" 2>&1 || {
		echo "interrupt-check: could not make the cluster for the check (see $log.cluster)" >&2
		exit 2
	}
	existing=_output/kubeconfig-$name
	args=(K8S_VERSION=1.35 KUBECONFIG="$PWD/$existing" CLUSTER_NAME="$name" ARTIFACTS="$PWD/_output/interrupt/artifacts-$stage")
	;;
*)
	echo "interrupt-check: unknown stage $stage" >&2
	exit 2
	;;
esac

# The kinds of process a run starts; anything of these the run leaves is a
# leak. Only this session's count (the run stays in it; what it starts in
# containers is counted as containers): a build someone else runs on the
# machine at the same time is not the run's.
session=$(ps -o sid= $$ | tr -d ' ')
procs() { ps -eo pid=,sid=,args= | awk -v s="$session" '$2 == s { $2 = ""; print }' | grep -E 'ginkgo|e2e\.test|/e2e-cluster|/bin/run |debootstrap|docker (exec|run|build|cp|save|load)|kind (create|delete)|testdriver-image|go-build' | grep -v -E 'grep|interrupt-check' | awk '{$1=""; print}' | sort; }
containers() { docker ps -a --format '{{.Names}}' | grep -v -x "$name-control-plane\|$name-worker" | sort; }
mounts() { findmnt -rn -o TARGET | sort; }
namespaces() { docker exec "$name-control-plane" kubectl --kubeconfig /etc/kubernetes/admin.conf get namespaces -o name | grep 'namespace/dra-testdriver' | sort; true; }

before_c=$(containers) before_m=$(mounts) before_p=$(procs)
start=$(date +%s)
# Job control puts the run in a process group of its own, as a terminal
# does, and leaves SIGINT as it is: a non-interactive shell otherwise
# starts a background job with SIGINT ignored, which no shell inside can
# trap, and the check would not be a Ctrl-C.
set -m
make --no-print-directory e2e "${args[@]}" >"$log" 2>&1 &
pid=$!
set +m
pgid=$(ps -o pgid= "$pid" | tr -d ' ')

reached() {
	case $stage in
	build) grep -q 'node-image: building' "$log" && sleep 20 ;;
	assemble) docker ps --format '{{.Names}}' | grep -q '^kind-e2e-build-' && sleep 5 ;;
	create) docker inspect "$name-control-plane" >/dev/null 2>&1 && sleep 10 ;;
	specs | existing) grep -q ' passed, ' "$log" ;;
	upgrade) docker exec "$name-control-plane" grep -q 'image: .*v1\.36' /etc/kubernetes/manifests/kube-apiserver.yaml 2>/dev/null ;;
	esac
}
until reached; do
	if ! kill -0 "$pid" 2>/dev/null; then
		echo "interrupt-check: the run ended before the $stage stage (see $log)" >&2
		exit 2
	fi
	sleep 1
done
at=$(($(date +%s) - start))
kill -INT -- "-$pgid"
sig=$(date +%s)
wait "$pid"
rc=$?
took=$(($(date +%s) - sig))
# What the group still runs after make returned.
for _ in $(seq 1 30); do pgrep -g "$pgid" >/dev/null || break; sleep 1; done
left_group=$(pgrep -g "$pgid" -a || true)

left=0
report() {
	if [ -n "$2" ]; then
		left=1
		printf '  %s left:\n%s\n' "$1" "$(sed 's/^/    /' <<<"$2")"
	fi
}
echo "interrupt-check $stage: SIGINT ${at}s into the run; make exited $rc after ${took}s"
# The cluster a run made must be gone; an existing one stays (its driver must not).
own=""
[ -n "$existing" ] || own=$(docker ps -a --format '{{.Names}}' | grep -x "$name-control-plane\|$name-worker" || true)
# Each list ends in a newline before the next is added, so the last name of
# one and the first of the other never share a line.
report containers "$(printf '%s\n%s' "$(comm -13 <(echo "$before_c") <(containers))" "$own" | sed '/^$/d')"
report mounts "$(comm -13 <(echo "$before_m") <(mounts))"
report processes "$(printf '%s\n%s' "$(comm -13 <(echo "$before_p") <(procs))" "$left_group" | sed '/^$/d')"
if [ -n "$existing" ]; then
	report "driver namespaces" "$(namespaces)"
fi
[ $left = 0 ] && echo "  nothing left"
exit $left
