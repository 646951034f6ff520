#!/usr/bin/env bash
# Builds krew (the kubectl plugin manager, sigs.k8s.io/krew/cmd/krew at the version pinned in go.mod) into a cache
# outside the repository, keyed by that version and a hash of go.mod and go.sum, and reuses what is already there.
# test/e2e/krew.test.ts installs fleet's krew plugin (krew/fleet-cli.yaml) with it. Prints the binary's path on its last
# stdout line (progress goes to stderr).
#   FLEET_KREW_CACHE   cache root (default ${XDG_CACHE_HOME:-$HOME/.cache}/fleet/krew)
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
VERSION=$(awk '$1=="require" && $2=="sigs.k8s.io/krew"{print $3; exit}' "$here/go.mod")
[ -n "$VERSION" ] || { echo "error: no sigs.k8s.io/krew version in $here/go.mod" >&2; exit 1; }
inputs=$(cat "$here/go.mod" "$here/go.sum" | sha256sum | cut -c1-12)
cache_root=${FLEET_KREW_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/fleet/krew}
# shellcheck source=../go-build.sh
source "$here/../go-build.sh"
go_build_cached krew "$here" "$cache_root/krew-$VERSION-$inputs" sigs.k8s.io/krew/cmd/krew
