#!/usr/bin/env bash
# Builds server-oracle (main.go: Go's net/url reading of an API server URL, standard library only) into a cache outside
# the repository, keyed by a hash of go.mod and main.go, and reuses what is already there. The server comparison
# property test (test/unit/server-key-property.test.ts) runs it. Prints the binary's path on its last stdout line.
#   FLEET_PLUGINS_CACHE   cache root (default ${XDG_CACHE_HOME:-$HOME/.cache}/fleet/plugins)
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
hash=$(cat "$here/go.mod" "$here/main.go" | sha256sum | cut -c1-12)
cache_root=${FLEET_PLUGINS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/fleet/plugins}
# shellcheck source=../go-build.sh
source "$here/../go-build.sh"
go_build_cached server-oracle "$here" "$cache_root/server-oracle-$hash"
