#!/usr/bin/env bash
# Builds fleet-credential (main.go: the cache-hit reader in front of `fleet kubeconfig credential`; issue 30) for this
# machine into a cache outside the repository, keyed by the hash of its module and source, and reuses what is there.
# The tests and bench/kubeconfig-export.ts run it; scripts/executable.mjs builds the release binaries itself. Prints the
# binary's path on its last stdout line (progress goes to stderr).
#   FLEET_READER_CACHE   cache root (default ${XDG_CACHE_HOME:-$HOME/.cache}/fleet/fleet-credential)
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
key=$(cat "$here/go.mod" "$here"/*.go "$here"/cache/*.go | sha256sum | cut -c1-16)
cache_root=${FLEET_READER_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/fleet/fleet-credential}
# shellcheck source=../../test/go-build.sh
source "$here/../../test/go-build.sh"
go_build_cached fleet-credential "$here" "$cache_root/$key"
