#!/usr/bin/env bash
# Builds argocd-consumer (main.go: Argo CD's own v1alpha1 cluster types reading a cluster Secret, at the version in
# go.mod) into a cache outside the repository, keyed by a hash of go.mod, go.sum and main.go, and reuses what is there.
# The e2e test of `fleet wi token` runs it. Prints the binary's directory on its last stdout line (progress on stderr).
#   FLEET_PLUGINS_CACHE   cache root (default ${XDG_CACHE_HOME:-$HOME/.cache}/fleet/plugins)
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
hash=$(cat "$here/go.mod" "$here/go.sum" "$here/main.go" | sha256sum | cut -c1-12)
cache_root=${FLEET_PLUGINS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/fleet/plugins}
out="$cache_root/argocd-consumer-$hash"
mkdir -p "$out"

# shellcheck source=../build-lock.sh
source "$here/../build-lock.sh"
build_lock "$out"

if [ -x "$out/argocd-consumer" ]; then
  echo "reuse $out/argocd-consumer" >&2
else
  command -v go >/dev/null || { echo "error: argocd-consumer is not in $out and Go is not installed to build it" >&2; exit 1; }
  start=$SECONDS
  echo "build argocd-consumer into $out" >&2
  (cd "$here" && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$out/.argocd-consumer.tmp" .)
  mv "$out/.argocd-consumer.tmp" "$out/argocd-consumer"
  echo "built argocd-consumer in $((SECONDS - start))s" >&2
fi
echo "$out"
