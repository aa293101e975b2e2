#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# Gives every tracked Go file and script the licence's SPDX line, once:
# a Go file's first line, then a blank line (so that it never becomes a
# package's doc comment, and a //go:build line may still follow it); a
# script's line after its shebang. A file that has it already is left as
# it is, so running this again changes nothing. hack/headers' test keeps
# every tracked file carrying it (CONTRIBUTING.md says why the line alone).
set -euo pipefail
cd "$(dirname "$0")/.."

spdx='SPDX-License-Identifier: Apache-2.0'

for f in $(git ls-files '*.go'); do
  if [ "$(head -n1 "$f")" = "// $spdx" ]; then continue; fi
  { printf '// %s\n\n' "$spdx"; cat "$f"; } > "$f.spdx" && mv "$f.spdx" "$f"
done

# The scripts: hack's, and CI's entry (.ci/run has no extension).
for f in $(git ls-files '*.sh') .ci/run; do
  if [ "$(sed -n 2p "$f")" = "# $spdx" ]; then continue; fi
  if [ "$(head -c2 "$f")" != '#!' ]; then
    echo "$f: no shebang line: give it one (the SPDX line goes after it)" >&2
    exit 1
  fi
  # sed -i keeps the file's mode (a script stays executable).
  sed -i "1a # $spdx" "$f"
done
