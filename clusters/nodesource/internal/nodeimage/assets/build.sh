#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs inside the node-image build container (see assemble.go): the systemd
# set-up of kind's base image, then the preload of every image kubeadm asks for.
set -euo pipefail
version=$1

find /lib/systemd/system/sysinit.target.wants/ -name systemd-tmpfiles-setup.service -delete
rm -f /lib/systemd/system/multi-user.target.wants/* /etc/systemd/system/*.wants/* \
  /lib/systemd/system/local-fs.target.wants/* /lib/systemd/system/sockets.target.wants/*udev* \
  /lib/systemd/system/sockets.target.wants/*initctl* /lib/systemd/system/basic.target.wants/*
echo "ReadKMsg=no" >> /etc/systemd/journald.conf
ln -sf /usr/lib/systemd/systemd /sbin/init
systemctl enable kubelet.service containerd.service undo-mount-hacks.service
systemctl mask systemd-binfmt.service
mkdir -p /etc/kubernetes/manifests /opt/cni/bin /etc/cdi /var/run/cdi

# Debian's CNI plugins, where containerd looks for them.
for p in /usr/lib/cni/*; do ln -sf "$p" /opt/cni/bin/; done

ctr oci spec \
  | jq '.hooks.createContainer[.hooks.createContainer|length] |= . + {"path": "/kind/bin/mount-product-files.sh"}' \
  | jq 'del(.process.rlimits)' > /etc/containerd/cri-base.json

containerd > /var/log/containerd-build.log 2>&1 &
for _ in $(seq 1 100); do
  ctr version > /dev/null 2>&1 && break
  sleep 0.2
done
for f in /kind/images/*.tar; do
  ctr -n k8s.io images import --label=io.cri-containerd.pinned=pinned --no-unpack "$f" > /dev/null
done

missing=0
present=$(ctr -n k8s.io images ls -q)
for img in $(kubeadm config images list --kubernetes-version "$version" 2> /dev/null); do
  grep -qx "$img" <<< "$present" || { echo "build.sh: kubeadm needs $img, which was not built" >&2; missing=1; }
done
kill %1
wait || true
rm -rf /kind/images /kind/build.sh /var/log/containerd-build.log
exit $missing
