#!/usr/bin/env bash
# Builds krew (the kubectl plugin manager) from the Go module pinned in go.mod into a cache outside the repository, keyed
# by krew's version and a hash of go.mod and go.sum, and reuses what is already there. test/e2e/krew.test.ts installs
# fleet's krew manifest (krew/fleet-cli.yaml) with it. Prints the binary's path on its last stdout line (progress goes to
# stderr).
#   FLEET_KREW_CACHE   cache root (default ${XDG_CACHE_HOME:-$HOME/.cache}/fleet/krew)
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
VERSION=$(awk '$1=="require" && $2=="sigs.k8s.io/krew"{print $3; exit}' "$here/go.mod")
[ -n "$VERSION" ] || { echo "error: no sigs.k8s.io/krew version in $here/go.mod" >&2; exit 1; }
inputs=$(cat "$here/go.mod" "$here/go.sum" | sha256sum | cut -c1-12)
out=${FLEET_KREW_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/fleet/krew}/krew-$VERSION-$inputs
mkdir -p "$out"
# shellcheck source=../build-lock.sh
source "$here/../build-lock.sh"
build_lock "$out"
if [ -x "$out/krew" ]; then
  echo "reuse $out/krew" >&2
else
  command -v go >/dev/null || { echo "error: krew is not in $out and Go is not installed to build it" >&2; exit 1; }
  start=$SECONDS
  echo "build krew $VERSION (sigs.k8s.io/krew/cmd/krew) into $out" >&2
  (cd "$here" && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$out/.krew.tmp" sigs.k8s.io/krew/cmd/krew)
  mv "$out/.krew.tmp" "$out/krew"
  echo "built krew in $((SECONDS - start))s" >&2
fi
echo "$out/krew"
