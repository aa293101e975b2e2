#!/usr/bin/env bash
# Installs what building a node image offline needs (debootstrap), where it is
# missing and can be installed. Best effort: on a machine that can pull the
# published kindest/node images nothing here is needed, and the node-image
# builder names any tool it truly lacks.
set -uo pipefail
command -v debootstrap >/dev/null 2>&1 && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "install-tools: installing debootstrap"
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y -qq debootstrap >/dev/null 2>&1 || { apt-get update -qq && apt-get install -y -qq debootstrap >/dev/null; }
else
  echo "install-tools: debootstrap is missing and cannot be installed here (needs root and apt-get); only published node images will work" >&2
fi
exit 0
