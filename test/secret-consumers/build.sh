#!/usr/bin/env bash
# Builds secret-consumers (the readers of three consumer Secret formats, each the consumer's own Go code at the version
# in go.mod: Cluster API's remote cluster client, multicluster-runtime's kubeconfig provider, Flux's runtime
# Impersonator; main.go) into a cache outside the repository, keyed by a hash of go.mod, go.sum and every .go file, and
# reuses what is already there. The e2e tests of `fleet creds generate|rotate|adopt` run it. Prints the binary's path on
# its last stdout line (progress goes to stderr).
#   FLEET_PLUGINS_CACHE   cache root (default ${XDG_CACHE_HOME:-$HOME/.cache}/fleet/plugins)
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
hash=$(cat "$here/go.mod" "$here/go.sum" "$here"/*.go | sha256sum | cut -c1-12)
cache_root=${FLEET_PLUGINS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/fleet/plugins}
# shellcheck source=../go-build.sh
source "$here/../go-build.sh"
go_build_cached secret-consumers "$here" "$cache_root/secret-consumers-$hash"
