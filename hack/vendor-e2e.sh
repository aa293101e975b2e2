#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# vendor-e2e.sh: the proof that "bring your own driver" (DRIVER,
# DEVICE_CLASS, ADMIN_CHECK) works with a DRA driver this project did not
# write. It makes a kind cluster, deploys upstream's own test driver
# (k8s.io/kubernetes/test/e2e/dra/test-driver at the version go.mod pins,
# packaged by hack/upstream-driver: a kubelet-plugin DaemonSet and the
# DeviceClass upstream-test-driver) the way a vendor would, waits until it
# publishes devices on every node, and runs the suite's authz and
# allocation specs against that cluster as an existing one. It then checks
# that the upstream driver itself prepared claims of the run. Everything it
# made is removed at the end, whatever happened.
#
# The cluster is not left idle, as a vendor's is not: a tenant's pod holds a
# device of the class on every node, and the run must be refused in one
# line (exit 2); with one node freed it must run there, the tenant's other
# pod and device untouched. ADMIN_CHECK's default asks for the variable
# upstream's driver gives the very claim and request the suite says the
# container got admin access through (DRA_DEVICE_CLAIM, DRA_DEVICE_REQUEST).
# The tenant's claim is resource.k8s.io/v1: K8S_VERSION 1.34 or later.
#
# Needs Docker up and the release's node image (NODE_IMAGE, default present).
set -euo pipefail
cd "$(dirname "$0")/.."
release=${K8S_VERSION:-1.35}
name=${CLUSTER_NAME:-vendor-e2e}
artifacts=${ARTIFACTS:-$PWD/_artifacts/vendor-e2e}
out=_output/upstream-driver
kubeconfig=$PWD/_output/kubeconfig-$name
# What hack/upstream-driver's manifests name.
driver=test-driver.cdi.k8s.io
class=upstream-test-driver
ns=upstream-dra-driver
ds=dra-test-driver

# The cleanup deletes the cluster by name, so a cluster of that name that
# is already there is someone else's: refuse before touching anything.
if [ -n "$(docker ps -aq --filter "label=io.x-k8s.kind.cluster=$name")" ]; then
	echo "vendor-e2e: a kind cluster named $name exists already; set CLUSTER_NAME to another name" >&2
	exit 1
fi
cleanup() {
	make --no-print-directory cluster-down CLUSTER_NAME="$name" >/dev/null 2>&1 || true
	rm -rf "$out" "$kubeconfig"
}
trap cleanup EXIT

# kubectl on the control-plane node: nothing needed on this machine.
kc() { docker exec -i "$name-control-plane" kubectl --kubeconfig /etc/kubernetes/admin.conf "$@"; }
# What the driver's pods said, for an error or the artifacts.
driver_logs() { kc -n "$ns" logs -l "app=$ds" --all-containers --prefix --tail=-1 --max-log-requests=20 2>&1 || true; }

make --no-print-directory cluster-up K8S_VERSION="$release" NODE_IMAGE="${NODE_IMAGE:-present}" CLUSTER_NAME="$name"

line=$(go run ./hack/upstream-driver --out "$out" --manifest "$out/deploy.yaml")
read -r tag archive workload workload_archive <<<"$line"
echo "vendor-e2e: built $tag, and the workload image $workload (a shell, as a vendor's image has)"

# Into every node's containerd, as the suite loads its own driver's image.
for a in "$archive" "$workload_archive"; do
	_output/bin/e2e-cluster load --name "$name" --release "$release" --archive "$a"
done
echo "vendor-e2e: loaded $tag and $workload into the nodes of $name"

kc apply -f - <"$out/deploy.yaml"
if ! kc -n "$ns" rollout status "ds/$ds" --timeout=3m; then
	echo "vendor-e2e: the upstream driver's DaemonSet did not become ready in 3m" >&2
	kc -n "$ns" get pods -o wide >&2 || true
	driver_logs | tail -n 40 >&2
	exit 1
fi

# Ready pods are not yet published devices: wait for a ResourceSlice of the
# driver on every node, as the suite reads them (spec.driver, spec.nodeName).
want=$(kc get nodes -o jsonpath='{range .items[*]}{.metadata.name}{"\n"}{end}' | sort)
deadline=$((SECONDS + 120))
while :; do
	have=$(kc get resourceslices --field-selector "spec.driver=$driver" -o jsonpath='{range .items[*]}{.spec.nodeName}{"\n"}{end}' | sort -u) || have=''
	missing=$(comm -23 <(echo "$want") <(echo "$have"))
	[ -n "$missing" ] || break
	if [ "$SECONDS" -ge "$deadline" ]; then
		echo "vendor-e2e: after 2m, no ResourceSlice of driver $driver for node(s): $(tr '\n' ' ' <<<"$missing")" >&2
		driver_logs | tail -n 40 >&2
		exit 1
	fi
	sleep 2
done
echo "vendor-e2e: $driver publishes devices on $(tr '\n' ' ' <<<"$want")"

# What upstream's driver puts in a container (app/kubeletplugin.go,
# nodePrepareResource: one CDI device per request of a claim it prepared)
# is only claim_<claim>_<request>=true, each character other than A-Z, a-z
# and 0-9 as '_', and its opaque config's parameters (user_<key>,
# admin_<key>); no variable names the device, and its devices (device-00 …)
# have no attributes. So the check asks for the variable of the very claim
# and request whose admin-access result the suite read from the claim's
# status (DRA_DEVICE_CLAIM, DRA_DEVICE_REQUEST; a subrequest's request is
# the part before '/'): the driver prepared that allocation for this
# container, not merely some claim of the node.
admin_check=${ADMIN_CHECK:-'v=$(printf "claim_%s_%s" "$DRA_DEVICE_CLAIM" "${DRA_DEVICE_REQUEST%%/*}" | tr -c "A-Za-z0-9" _); env | grep -qx "$v=true"'}
vendor_e2e() {
	make --no-print-directory e2e K8S_VERSION="$release" KUBECONFIG="$kubeconfig" CLUSTER_NAME="$name" \
		DRIVER="$driver" DEVICE_CLASS="$class" WORKLOAD_IMAGE="$workload" ADMIN_CHECK="$admin_check" \
		LABELS="${LABELS:-}" ARTIFACTS="$artifacts" "$@"
}

# A vendor's cluster is seldom idle: a tenant's pod holds a device of the
# class on every node. The run must refuse in one line, before any spec,
# and say what to do.
tenant() { # node: a pod there holding one device of the class (kube-scheduler
	# allocates claims: a pod given a nodeName outright would never get one)
	kc apply -f - <<YAML
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: held-$1, namespace: tenant}
spec:
  devices:
    requests:
    - name: gpu
      exactly: {deviceClassName: $class}
---
apiVersion: v1
kind: Pod
metadata: {name: tenant-$1, namespace: tenant}
spec:
  nodeSelector: {kubernetes.io/hostname: $1}
  tolerations: [{operator: Exists}]
  resourceClaims: [{name: gpu, resourceClaimName: held-$1}]
  containers:
  - name: c
    image: $workload
    imagePullPolicy: IfNotPresent
    command: [sh, -c, "exec sleep 86400"]
    resources: {claims: [{name: gpu}]}
YAML
}
# What the tenant's claims hold: claim=pool/device, one a word.
holds() { kc -n tenant get resourceclaims -o jsonpath='{range .items[*]}{.metadata.name}={.status.allocation.devices.results[0].pool}/{.status.allocation.devices.results[0].device} {end}'; }
mkdir -p "$artifacts"
kc create namespace tenant
for node in $want; do tenant "$node"; done
kc -n tenant wait --for=condition=Ready pod --all --timeout=2m
held=$(holds)
echo "vendor-e2e: a tenant holds a device on every node: $held"
busy_rc=0
vendor_e2e >"$artifacts/busy.log" 2>&1 || busy_rc=$?
refusal=$(grep -m1 'in use' "$artifacts/busy.log" || true)
echo "vendor-e2e: with every node busy, make e2e exited $busy_rc: ${refusal:-no refusal printed}"
failed=0
if [ "$busy_rc" != 2 ] || [ -z "$refusal" ]; then
	echo "vendor-e2e: a cluster with every node busy must be refused in one line, exit 2 (log: $artifacts/busy.log)" >&2
	failed=1
fi

# One node freed: the run must use it, and leave the tenant's other pod and
# its device alone.
worker=$(kc get nodes -l '!node-role.kubernetes.io/control-plane' -o jsonpath='{.items[0].metadata.name}')
kc -n tenant delete pod "tenant-$worker" --wait
kc -n tenant delete resourceclaim "held-$worker" --wait
kept=$(holds)
echo "vendor-e2e: node $worker freed; the tenant still holds $kept"

# A vendor certifies several classes of its driver: a second DeviceClass,
# selecting the same devices under another name, is a second run and a
# column of its own in the one sign-off.
class2=$class-second
kc apply -f - <<YAML
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: $class2}
spec:
  selectors:
  - cel: {expression: 'device.driver == "$driver"'}
YAML

rc=0
vendor_e2e DEVICE_CLASS="$class,$class2" || rc=$?
echo "vendor-e2e: the sign-off has columns for $(grep -o "class ${class}[a-z-]*" "$artifacts/signoff.md" | sort -u | tr '\n' ' ')"
for c in "$class" "$class2"; do
	if ! grep -qE "class ${c}([^a-z0-9-]|$)" "$artifacts/signoff.md"; then
		echo "vendor-e2e: the sign-off has no column for DEVICE_CLASS=$c" >&2
		failed=1
	fi
done
after=$(holds)
phases=$(kc -n tenant get pods -o jsonpath='{range .items[*]}{.metadata.name}={.status.phase} {end}')
echo "vendor-e2e: after the run the tenant holds $after ($phases)"
if [ "$after" != "$kept" ] || [[ "$phases" != *=Running* ]]; then
	echo "vendor-e2e: the run disturbed the tenant's claim or pod" >&2
	failed=1
fi

# The specs passing is not enough: the claims must have been prepared by
# upstream's plugin (it logs each prepare at -v=3), not by anything of ours.
driver_logs >"$artifacts/upstream-driver.log"
prepared=$(grep -c 'CDI file(s) created' "$artifacts/upstream-driver.log" || true)
echo "vendor-e2e: the upstream driver prepared claims $prepared time(s) (log: $artifacts/upstream-driver.log)"
[ "$prepared" -gt 0 ] || failed=1
[ "$rc" = 0 ] && [ "$failed" = 0 ] && echo "vendor-e2e: passed" && exit 0
echo "vendor-e2e: failed (make e2e exited $rc)" >&2
exit 1
