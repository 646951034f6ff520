#!/usr/bin/env bash
# Builds kustomize (sigs.k8s.io/kustomize/kustomize/v5 at the version of sigs.k8s.io/kustomize/kustomize/v5 pinned in go.mod) into a cache outside the repository, keyed by that version and
# a hash of go.mod and go.sum, and reuses what is already there. test/e2e/chart.test.ts renders deploy/kustomize with it and compares the objects with the chart's. Prints the binary's path on its last stdout line
# (progress goes to stderr).
#   FLEET_KUSTOMIZE_CACHE   cache root (default ${XDG_CACHE_HOME:-$HOME/.cache}/fleet/kustomize)
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
VERSION=$(awk '$1=="require" && $2=="sigs.k8s.io/kustomize/kustomize/v5"{print $3; exit}' "$here/go.mod")
[ -n "$VERSION" ] || { echo "error: no sigs.k8s.io/kustomize/kustomize/v5 version in $here/go.mod" >&2; exit 1; }
inputs=$(cat "$here/go.mod" "$here/go.sum" | sha256sum | cut -c1-12)
cache_root=${FLEET_KUSTOMIZE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/fleet/kustomize}
# shellcheck source=../go-build.sh
source "$here/../go-build.sh"
go_build_cached kustomize "$here" "$cache_root/kustomize-$VERSION-$inputs" sigs.k8s.io/kustomize/kustomize/v5
