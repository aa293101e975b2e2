#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs, where missing and where it can (root with apt-get), what this
# machine needs beyond Go and Docker:
#   debootstrap              building a node image offline (not needed where
#                            kind's published images can be pulled)
#   chromium-headless-shell  make test renders signoff.html in it (the test
#                            says it skipped where no headless Chromium is)
#   ShellCheck               make test's actionlint checks the workflow's
#                            run: scripts with it, as a hosted runner does
#                            (make test says it skipped where it is missing;
#                            the package is shellcheck, a word that starts
#                            a directive where it starts a comment)
# With the argument `e2e` (make e2e, make node-image, make cluster-up) only
# what building a node image needs, debootstrap; without it (make tools)
# all three. Each package is named before it is installed.
# Best effort: what cannot be installed is named, and the run goes on.
set -uo pipefail
missing=()
# debootstrap lives in /usr/sbin, which a user's PATH may lack.
command -v debootstrap >/dev/null 2>&1 || [ -x /usr/sbin/debootstrap ] || missing+=(debootstrap)
if [ "${1:-all}" != e2e ] && ! command -v chromium-headless-shell >/dev/null 2>&1 && ! command -v chromium >/dev/null 2>&1 && ! command -v google-chrome >/dev/null 2>&1; then
  missing+=(chromium-headless-shell)
fi
if [ "${1:-all}" != e2e ] && ! command -v shellcheck >/dev/null 2>&1; then
  missing+=(shellcheck)
fi
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "install-tools: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y -qq "${missing[@]}" >/dev/null 2>&1 || { apt-get update -qq && apt-get install -y -qq "${missing[@]}" >/dev/null; } ||
    echo "install-tools: could not install ${missing[*]}" >&2
else
  echo "install-tools: ${missing[*]} missing and cannot be installed here (needs root and apt-get); without debootstrap only published node images work, without a headless Chromium make test skips the sign-off page's rendering, without shellcheck actionlint skips the workflow's run: scripts" >&2
fi
exit 0
