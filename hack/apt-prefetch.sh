#!/usr/bin/env bash
# Downloads, in the background, the Debian packages that docker-up and
# e2e-tools are about to install here (docker.io where no dockerd is,
# debootstrap where it is missing), so that on a cold machine apt fetches
# them while the runner compiles (a minute), and the two later only unpack.
#
# It installs nothing: apt-get --download-only fills apt's cache, so a run
# that preflight refuses still leaves the machine's software as it was.
# docker-up and install-tools take the same lock before their own apt-get,
# so they wait for it. Best effort and quiet: whatever fails here, the
# installs fetch again and say why. Its output: _output/apt-prefetch.log.
set -uo pipefail
[ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 && command -v flock >/dev/null 2>&1 || exit 0
pkgs=()
command -v dockerd >/dev/null 2>&1 || pkgs+=(docker.io)
command -v debootstrap >/dev/null 2>&1 || [ -x /usr/sbin/debootstrap ] || pkgs+=(debootstrap)
[ ${#pkgs[@]} -eq 0 ] && exit 0
out=${OUTPUT_DIR:-$(cd "$(dirname "$0")/.." && pwd)/_output}
mkdir -p "$out"
echo "apt-prefetch: downloading ${pkgs[*]} beside the runner's compile (installing nothing yet)"
export DEBIAN_FRONTEND=noninteractive
setsid flock /run/e2e-apt.lock sh -c "apt-get update -qq && apt-get install -y -qq --download-only ${pkgs[*]}" \
  >"$out/apt-prefetch.log" 2>&1 </dev/null &
exit 0
