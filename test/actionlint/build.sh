#!/usr/bin/env bash
# Builds actionlint (github.com/rhysd/actionlint/cmd/actionlint at the version pinned in go.mod) into a cache outside the
# repository, keyed by that version and a hash of go.mod and go.sum, and reuses what is already there. .ci/run and
# test/unit/workflows.test.ts check every workflow in .github/workflows/ with it. Prints the binary's path on its last
# stdout line (progress goes to stderr).
#   FLEET_ACTIONLINT_CACHE   cache root (default ${XDG_CACHE_HOME:-$HOME/.cache}/fleet/actionlint)
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
VERSION=$(awk '$1=="require" && $2=="github.com/rhysd/actionlint"{print $3; exit}' "$here/go.mod")
[ -n "$VERSION" ] || { echo "error: no github.com/rhysd/actionlint version in $here/go.mod" >&2; exit 1; }
inputs=$(cat "$here/go.mod" "$here/go.sum" | sha256sum | cut -c1-12)
cache_root=${FLEET_ACTIONLINT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/fleet/actionlint}
# shellcheck source=../go-build.sh
source "$here/../go-build.sh"
go_build_cached actionlint "$here" "$cache_root/actionlint-$VERSION-$inputs" github.com/rhysd/actionlint/cmd/actionlint
