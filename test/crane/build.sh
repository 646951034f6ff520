#!/usr/bin/env bash
# Builds crane (github.com/google/go-containerregistry/cmd/crane at the version of github.com/google/go-containerregistry pinned in go.mod) into a cache outside the repository, keyed by that version and
# a hash of go.mod and go.sum, and reuses what is already there. test/e2e/chart.test.ts serves a local OCI registry with `crane registry serve` and pushes the image there. Prints the binary's path on its last stdout line
# (progress goes to stderr).
#   FLEET_CRANE_CACHE   cache root (default ${XDG_CACHE_HOME:-$HOME/.cache}/fleet/crane)
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
VERSION=$(awk '$1=="require" && $2=="github.com/google/go-containerregistry"{print $3; exit}' "$here/go.mod")
[ -n "$VERSION" ] || { echo "error: no github.com/google/go-containerregistry version in $here/go.mod" >&2; exit 1; }
inputs=$(cat "$here/go.mod" "$here/go.sum" | sha256sum | cut -c1-12)
cache_root=${FLEET_CRANE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/fleet/crane}
# shellcheck source=../go-build.sh
source "$here/../go-build.sh"
go_build_cached crane "$here" "$cache_root/crane-$VERSION-$inputs" github.com/google/go-containerregistry/cmd/crane
