#!/usr/bin/env bash
# Builds fleet-reference (bench/reference/main.go: client-go sending exactly fleet's requests; issue 23) from the module
# versions pinned in go.mod/go.sum into a cache outside the repository, keyed by the hash of those files and the source,
# and reuses what is already there. bench/run.ts and test/e2e/bench-reference.test.ts run it. Prints the binary's path
# on its last stdout line (progress goes to stderr).
#   FLEET_REFERENCE_CACHE   cache root (default ${XDG_CACHE_HOME:-$HOME/.cache}/fleet/bench-reference)
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
key=$(cat "$here/go.mod" "$here/go.sum" "$here"/*.go | sha256sum | cut -c1-16)
cache_root=${FLEET_REFERENCE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/fleet/bench-reference}
# shellcheck source=../../test/go-build.sh
source "$here/../../test/go-build.sh"
go_build_cached fleet-reference "$here" "$cache_root/$key"
