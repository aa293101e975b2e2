#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# break-component.sh: a control-plane component broken on purpose, to see a
# spec fail on the behaviour it names. It builds one Kubernetes command of a
# pinned release the way the node images build theirs (a generated module that
# requires k8s.io/kubernetes and pins each staging module to its v0 twin,
# gobuild's flags), with exactly one line of one module file changed, and can
# put the binary in place of a kind cluster's static pod's own.
#
#   hack/break-component.sh build RELEASE COMMAND MODULE FILE SED OUT
#       RELEASE  a pinned patch, 1.35.4
#       COMMAND  kube-scheduler | kube-apiserver | kube-controller-manager
#       MODULE   the module to change, k8s.io/dynamic-resource-allocation
#                (its version is the release's twin) or k8s.io/kubernetes
#       FILE     a file of that module, structured/internal/stable/allocator_stable.go
#       SED      a sed expression that must change exactly one line
#       OUT      the binary to write
#   hack/break-component.sh install CLUSTER COMMAND BINARY
#       mounts BINARY over the command in the static pod of CLUSTER's
#       control-plane node and waits for the kubelet to run it
#   hack/break-component.sh image CLUSTER COMMAND BINARY
#       puts BINARY in the command's image, under the image's own tag, on
#       every node of CLUSTER: the pods started from it afterwards run it
#       (the kube-schedulers a spec starts, a static pod a gate move
#       rewrites), where install's mount reaches only the static pod as it is
#
# Typical use: make cluster-up CLUSTER_NAME=broken, install, then make e2e
# KUBECONFIG=_output/kubeconfig-broken CLUSTER_NAME=broken LABELS=... ;
# make cluster-down CLUSTER_NAME=broken. Not for the suite's runs: a gate move
# rewrites the manifest and drops the mount.
set -euo pipefail
cd "$(dirname "$0")/.."

build() {
	local release=$1 command=$2 module=$3 file=$4 expr=$5 out=$6
	local twin="v0.${release#1.}" version
	case $module in
	k8s.io/kubernetes) version="v$release" ;;
	k8s.io/*) version=$twin ;;
	*) echo "break-component: $module: only k8s.io modules" >&2; return 2 ;;
	esac
	local work=_output/break-component/$command-$release abs
	abs=$(realpath -m "$out")
	rm -rf "$work" && mkdir -p "$work"
	go mod download "k8s.io/kubernetes@v$release" "$module@$version"
	local src dst
	src=$(go mod download -json "$module@$version" | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p')
	dst=$work/patched
	cp -r "$src" "$dst" && chmod -R u+w "$dst"
	sed -i -e "$expr" "$dst/$file"
	local changed
	changed=$(diff "$src/$file" "$dst/$file" | grep -c '^>' || true)
	if [ "$changed" != 1 ]; then
		echo "break-component: $expr changes $changed lines of $module/$file, not one" >&2
		return 2
	fi
	diff -u "$src/$file" "$dst/$file" || true
	local kdir
	kdir=$(go mod download -json "k8s.io/kubernetes@v$release" | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p')
	{
		printf 'module nodeimage.local/broken\n\ngo 1.25.0\n\nrequire k8s.io/kubernetes v%s\n\nreplace (\n' "$release"
		awk '$2 == "=>" && $3 ~ /^\.\/staging\// {print $1}' "$kdir/go.mod" | while read -r m; do
			if [ "$m" = "$module" ]; then printf '\t%s => ./patched\n' "$m"; else printf '\t%s => %s %s\n' "$m" "$m" "$twin"; fi
		done
		[ "$module" != k8s.io/kubernetes ] || printf '\tk8s.io/kubernetes => ./patched\n'
		printf ')\n'
	} >"$work/go.mod"
	(cd "$work" && GOFLAGS="-mod=mod -trimpath -gcflags=all=-dwarf=false" GOWORK=off CGO_ENABLED=0 \
		go build -ldflags "-s -w -X k8s.io/component-base/version.gitVersion=v$release" -o "$abs" "k8s.io/kubernetes/cmd/$command")
	echo "break-component: built $out ($command $release, one line of $module/$file changed)"
}

install() {
	local command=$2 binary=$3 node=$1-control-plane manifest sum
	manifest=/etc/kubernetes/manifests/$command.yaml
	sum=$(md5sum "$binary" | cut -c1-12)
	docker cp "$binary" "$node:/usr/local/bin/$command-broken"
	if ! docker exec "$node" grep -q "$command-broken" "$manifest"; then
		# The mount goes in with the pod's own volumes.
		docker exec "$node" sed -i \
			-e "s|^    volumeMounts:|    volumeMounts:\n    - mountPath: /usr/local/bin/$command\n      name: broken-binary\n      readOnly: true|" \
			-e "s|^  volumes:|  volumes:\n  - hostPath:\n      path: /usr/local/bin/$command-broken\n      type: File\n    name: broken-binary|" "$manifest"
	fi
	# The binary's sum as an annotation: a manifest that changes with every
	# binary, so the kubelet starts the pod again each time, and a mirror
	# pod that says which binary it runs.
	docker exec "$node" sed -i -e '/^    break-component: /d' "$manifest"
	if docker exec "$node" grep -q '^  annotations:$' "$manifest"; then
		docker exec "$node" sed -i "s|^  annotations:\$|  annotations:\n    break-component: \"$sum\"|" "$manifest"
	else
		docker exec "$node" sed -i "s|^metadata:|metadata:\n  annotations:\n    break-component: \"$sum\"|" "$manifest"
	fi
	local mirror=$command-$node
	for _ in $(seq 1 60); do
		if docker exec "$node" kubectl --kubeconfig /etc/kubernetes/admin.conf -n kube-system get pod "$mirror" \
			-o jsonpath='{.metadata.annotations.break-component} {.status.conditions[?(@.type=="Ready")].status}' 2>/dev/null | grep -qx "$sum True"; then
			echo "break-component: $node runs the broken $command ($sum)"
			return 0
		fi
		sleep 2
	done
	echo "break-component: $node did not run the broken $command ($sum) within 120 s" >&2
	return 1
}

image() {
	local cluster=$1 command=$2 binary=$3 node=$1-control-plane image work
	image=$(docker exec "$node" sed -n 's/^    image: //p' "/etc/kubernetes/manifests/$command.yaml")
	[ -n "$image" ] || { echo "break-component: no image in $node's $command manifest" >&2; return 1; }
	work=$(mktemp -d)
	# The node's own image, brought into the host's Docker to build on: nothing is pulled.
	docker exec "$node" ctr -n k8s.io images export - "$image" | docker load >/dev/null
	cp "$binary" "$work/$command"
	printf 'FROM %s\nCOPY %s /usr/local/bin/%s\n' "$image" "$command" "$command" >"$work/Dockerfile"
	docker build -q -t "$image" "$work" >/dev/null
	for n in $(docker ps --filter "label=io.x-k8s.kind.cluster=$cluster" --format '{{.Names}}'); do
		docker save "$image" | docker exec -i "$n" ctr -n k8s.io images import - >/dev/null
		echo "break-component: $n has $image with the broken $command"
	done
	rm -rf "$work"
}

case ${1:-} in
build) shift && [ $# = 6 ] && build "$@" ;;
install) shift && [ $# = 3 ] && install "$@" ;;
image) shift && [ $# = 3 ] && image "$@" ;;
*)
	sed -n '2,30p' "$0" >&2
	exit 2
	;;
esac
