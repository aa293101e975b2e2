#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Regenerates clusters/nodeconfig/testdata/<minor>/*.yaml: the static pod
# manifests kubeadm writes for each supported release, taken from that
# release's node image, so the manifest edits are unit-tested on what each
# kubeadm really writes. Needs Docker and the node images (make node-image).
#   hack/capture-manifests.sh kind-e2e/node:v1.33.13-... [more images]
set -euo pipefail
cd "$(dirname "$0")/.."
for image in "$@"; do
  version=$(docker run --rm --entrypoint cat "$image" /kind/version)
  minor=$(echo "$version" | sed -E 's/^v([0-9]+\.[0-9]+)\..*/\1/')
  out=clusters/nodeconfig/testdata/$minor
  mkdir -p "$out"
  docker run --rm --entrypoint sh "$image" -c \
    "kubeadm init phase control-plane all --kubernetes-version $version >/dev/null && tar -C /etc/kubernetes/manifests -c ." |
    tar -C "$out" -x
  echo "$out: kubeadm $version"
done
