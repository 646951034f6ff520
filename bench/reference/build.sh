#!/usr/bin/env bash
# Builds fleet-reference (bench/reference/main.go: client-go sending exactly fleet's requests; issue 23) from the module
# versions pinned in go.mod/go.sum into a cache outside the repository, keyed by the hash of those files and the source,
# and reuses what is already there. bench/run.ts and test/e2e/bench-reference.test.ts run it. Prints the binary's path
# on its last stdout line (progress goes to stderr).
#   FLEET_REFERENCE_CACHE   cache root (default ${XDG_CACHE_HOME:-$HOME/.cache}/fleet/bench-reference)
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
key=$(cat "$here/go.mod" "$here/go.sum" "$here/main.go" | sha256sum | cut -c1-16)
cache_root=${FLEET_REFERENCE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/fleet/bench-reference}
out="$cache_root/$key"
mkdir -p "$out"

# shellcheck source=../../test/build-lock.sh
source "$here/../../test/build-lock.sh"
build_lock "$out"

if [ -x "$out/fleet-reference" ]; then
  echo "reuse $out/fleet-reference" >&2
else
  command -v go >/dev/null || { echo "error: fleet-reference is not in $out and Go is not installed to build it" >&2; exit 1; }
  start=$SECONDS
  echo "build fleet-reference (client-go $(awk '$1=="k8s.io/client-go"{print $2}' "$here/go.mod")) into $out" >&2
  (cd "$here" && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$out/.fleet-reference.tmp" .)
  mv "$out/.fleet-reference.tmp" "$out/fleet-reference"
  echo "built fleet-reference in $((SECONDS - start))s" >&2
fi
echo "$out/fleet-reference"
