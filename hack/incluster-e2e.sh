#!/usr/bin/env bash
# incluster-e2e.sh: the proof that the suite runs from inside the cluster it
# tests. It makes a kind cluster, loads the bundled driver's image and the
# suite's image (make suite-image) into its nodes, applies the Job that
# make suite-image wrote (a ServiceAccount bound to cluster-admin), waits
# for it, and reads its results where it left them: JUnit, report.json,
# report.md, the sign-off and the done file Sonobuoy would collect.
# Everything it made is removed at the end, whatever happened.
#
# Needs Docker up and the release's node image (NODE_IMAGE, default present).
set -euo pipefail
cd "$(dirname "$0")/.."
release=${K8S_VERSION:-1.35}
name=${CLUSTER_NAME:-incluster-e2e}
artifacts=${ARTIFACTS:-$PWD/_artifacts/incluster-e2e}
out=_output/suite-image
ns=adminaccess-conformance

if [ -n "$(docker ps -aq --filter "label=io.x-k8s.kind.cluster=$name")" ]; then
	echo "incluster-e2e: a kind cluster named $name exists already; set CLUSTER_NAME to another name" >&2
	exit 1
fi
trap 'make --no-print-directory cluster-down CLUSTER_NAME="$name" >/dev/null 2>&1 || true' EXIT
kc() { docker exec -i "$name-control-plane" kubectl --kubeconfig /etc/kubernetes/admin.conf "$@"; }

make --no-print-directory cluster-up K8S_VERSION="$release" NODE_IMAGE="${NODE_IMAGE:-present}" CLUSTER_NAME="$name"
read -r driver driver_archive < <(go run ./testdriver/cmd/testdriver-image --out _output/testdriver)
# The Job's variables are make e2e's, taken from this environment.
read -r suite suite_archive < <(K8S_VERSION="$release" TESTDRIVER_IMAGE="$driver" LABELS="${LABELS:-authz || allocation}" \
	go run ./e2e/cmd/suite-image --out "$out")
for a in "$driver_archive" "$suite_archive"; do
	_output/bin/e2e-cluster load --name "$name" --release "$release" --archive "$a"
done
echo "incluster-e2e: loaded $driver and $suite into the nodes of $name"

kc apply -f - <"$out/incluster.yaml"
# The Job ends one way or the other; its own deadline bounds it too.
deadline=$((SECONDS + ${WAIT_SECONDS:-1800}))
state=""
while [ "$SECONDS" -lt "$deadline" ]; do
	state=$(kc -n "$ns" get job adminaccess-suite -o jsonpath='{range .status.conditions[?(@.status=="True")]}{.type}{" "}{end}')
	case "$state" in *Complete* | *Failed*) break ;; esac
	sleep 5
done
echo "incluster-e2e: the Job ended: ${state:-still running after ${WAIT_SECONDS:-1800}s}"
mkdir -p "$artifacts"
kc -n "$ns" logs job/adminaccess-suite --tail=-1 >"$artifacts/job.log" 2>&1 || true
rm -rf "$artifacts/results"
docker cp "$name-control-plane:/var/lib/adminaccess-conformance/results" "$artifacts/results"
echo "incluster-e2e: results in $artifacts/results: $(cd "$artifacts/results" && find . -type f | sort | tr '\n' ' ')"
failed=0
for f in "$release/junit.xml" "$release/report.json" "$release/report.md" signoff.md done; do
	[ -f "$artifacts/results/$f" ] || { echo "incluster-e2e: no $f in the results" >&2; failed=1; }
done
[ "$failed" = 0 ] && echo "incluster-e2e: done file names $(cat "$artifacts/results/done")"
grep -m1 '^\*\*' "$artifacts/results/$release/report.md" || true
case "$state" in *Complete*) ;; *) failed=1 ;; esac
[ "$failed" = 0 ] && echo "incluster-e2e: passed" && exit 0
echo "incluster-e2e: failed (see $artifacts/job.log)" >&2
exit 1
