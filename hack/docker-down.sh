#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Undoes what hack/docker-up.sh did to this host, and nothing else: stops the
# dockerd it started and puts back the /etc/docker/daemon.json it replaced.
# A Docker that was running before docker-up is left running.
set -euo pipefail

conf=/etc/docker/daemon.json
backup=$conf.before-e2e
marker=/etc/docker/.written-by-e2e
pidfile=/run/dockerd-e2e.pid

if [ -f "$pidfile" ]; then
  pid=$(cat "$pidfile")
  if kill -0 "$pid" 2>/dev/null; then
    echo "docker-down: stopping the dockerd docker-up started (pid $pid)"
    kill "$pid"
    for _ in $(seq 1 30); do kill -0 "$pid" 2>/dev/null || break; sleep 1; done
  fi
  rm -f "$pidfile"
fi
if [ -f "$marker" ]; then
  if [ -f "$backup" ]; then
    mv -f "$backup" "$conf"
    echo "docker-down: restored $conf"
  else
    rm -f "$conf"
    echo "docker-down: removed the $conf docker-up wrote (there was none before)"
  fi
  rm -f "$marker"
fi
