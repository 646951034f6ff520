#!/usr/bin/env bash
# Builds wi-consumer (main.go: a controller's use of sigs.k8s.io/cluster-inventory-api pkg/access, at the version in
# go.mod) into a cache outside the repository, keyed by a hash of go.mod, go.sum and main.go, and reuses what is there.
# The e2e test of `fleet wi token` runs it. Prints the binary's directory on its last stdout line (progress on stderr).
#   FLEET_PLUGINS_CACHE   cache root (default ${XDG_CACHE_HOME:-$HOME/.cache}/fleet/plugins)
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
hash=$(cat "$here/go.mod" "$here/go.sum" "$here/main.go" | sha256sum | cut -c1-12)
cache_root=${FLEET_PLUGINS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/fleet/plugins}
out="$cache_root/wi-consumer-$hash"
mkdir -p "$out"

# shellcheck source=../build-lock.sh
source "$here/../build-lock.sh"
build_lock "$out"

if [ -x "$out/wi-consumer" ]; then
  echo "reuse $out/wi-consumer" >&2
else
  command -v go >/dev/null || { echo "error: wi-consumer is not in $out and Go is not installed to build it" >&2; exit 1; }
  start=$SECONDS
  echo "build wi-consumer into $out" >&2
  (cd "$here" && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$out/.wi-consumer.tmp" .)
  mv "$out/.wi-consumer.tmp" "$out/wi-consumer"
  echo "built wi-consumer in $((SECONDS - start))s" >&2
fi
echo "$out"
