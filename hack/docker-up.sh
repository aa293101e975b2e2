#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Makes sure a Docker engine runs that can start kind's privileged node containers,
# changing the host only where it must, and saying so first.
#
# - Docker already answers and can run privileged containers: nothing is changed.
# - No engine: installs Debian's docker.io (when apt is there) and starts dockerd
#   in the background, as it is configured.
# - The host's capability bounding set is incomplete (some VMs drop
#   CAP_SYS_RESOURCE): every `docker run --privileged` fails there with "unable
#   to apply caps". runc-capshim strips what the host cannot grant. kind cannot
#   pick a runtime per container, so the shim must be dockerd's default runtime:
#   /etc/docker/daemon.json is rewritten, the previous one kept beside it, and
#   hack/docker-down.sh (make docker-down) stops that dockerd and restores it.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
out=${OUTPUT_DIR:-$root/_output}
shim=/usr/local/bin/runc-capshim
log=${DOCKERD_LOG:-/var/log/dockerd-e2e.log}

die() { echo "docker-up: $*" >&2; exit 1; }

# bounding_complete is true when no known capability is missing from CapBnd.
bounding_complete() {
  local bnd; bnd=$(awk '/^CapBnd:/ {print $2}' /proc/self/status)
  # 41 capabilities (0..40) are what runc asks for with --privileged.
  (( (16#$bnd & 0x1ffffffffff) == 0x1ffffffffff ))
}

install_shim() {
  mkdir -p "$out/bin"
  (cd "$root" && CGO_ENABLED=0 go build -trimpath -o "$out/bin/runc-capshim" ./clusters/nodesource/cmd/runc-capshim)
  # Replace atomically: a running dockerd may be executing the old file.
  install -m 0755 "$out/bin/runc-capshim" "$shim.new" && mv -f "$shim.new" "$shim"
}

# A daemon that runs but refuses this user is not a missing daemon: say which.
sock=/var/run/docker.sock
if [ "$(id -u)" != 0 ] && [ -S "$sock" ] && ! docker info >/dev/null 2>&1; then
  if ! id -nG | tr ' ' '\n' | grep -qx docker; then
    die "dockerd runs, but user $(id -un) may not use $sock: add the user to the docker group (sudo usermod -aG docker $(id -un)) and log in again"
  fi
  die "dockerd's socket $sock is there, but docker info fails for $(id -un): $(docker info 2>&1 | tail -n 1)"
fi

if docker info >/dev/null 2>&1; then
  if bounding_complete || docker info --format '{{json .Runtimes}}' 2>/dev/null | grep -q capshim; then
    exit 0
  fi
  die "Docker runs, but this host's capability bounding set is incomplete and dockerd has no capshim runtime; \
privileged kind nodes will fail. Stop dockerd and run $0 again so it can restart it with the shim."
fi

if ! command -v dockerd >/dev/null 2>&1; then
  if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
    die "no Docker engine runs and none can be installed here (needs root and apt-get); install Docker and run again"
  fi
  echo "docker-up: installing docker.io from Debian's packages"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq || die "apt-get update failed; cannot install Docker"
  apt-get install -y -qq docker.io >/dev/null || die "apt-get install docker.io failed"
fi
[ "$(id -u)" = 0 ] || die "dockerd is installed but not running, and starting it needs root"

conf=/etc/docker/daemon.json
backup=$conf.before-e2e
marker=/etc/docker/.written-by-e2e
if ! bounding_complete; then
  command -v go >/dev/null 2>&1 || die "go is needed to build runc-capshim"
  echo "docker-up: this host's capability bounding set is incomplete, so privileged kind nodes need runc-capshim as dockerd's default runtime: writing $conf (the previous one, if any, is kept as $backup; make docker-down restores it)"
  install_shim
  mkdir -p /etc/docker
  if [ -f "$conf" ] && [ ! -f "$marker" ] && [ ! -f "$backup" ]; then
    cp -p "$conf" "$backup"
  fi
  cat > "$conf" <<JSON
{
  "runtimes": {"capshim": {"path": "$shim"}},
  "default-runtime": "capshim",
  "storage-driver": "overlay2"
}
JSON
  touch "$marker"
fi
echo "docker-up: starting dockerd (log: $log)"
setsid nohup dockerd >"$log" 2>&1 < /dev/null &
echo $! > /run/dockerd-e2e.pid
for _ in $(seq 1 60); do
  docker info >/dev/null 2>&1 && { echo "docker-up: Docker $(docker version --format '{{.Server.Version}}') is up"; exit 0; }
  sleep 1
done
tail -20 "$log" >&2
die "dockerd did not answer within 60s"
