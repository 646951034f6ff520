#!/usr/bin/env bash
# Builds kubeconfig-oracle (main.go: client-go's clientcmd.Load at the version in go.mod, kubectl 1.35's) into a cache
# outside the repository, keyed by a hash of go.mod, go.sum and main.go, and reuses what is already there. The property
# test of fleet's kubeconfig edits (test/unit/kubeconfig-edit-property.test.ts) runs it. Prints the binary's path on its
# last stdout line (progress goes to stderr).
#   FLEET_PLUGINS_CACHE   cache root (default ${XDG_CACHE_HOME:-$HOME/.cache}/fleet/plugins)
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
hash=$(cat "$here/go.mod" "$here/go.sum" "$here/main.go" | sha256sum | cut -c1-12)
cache_root=${FLEET_PLUGINS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/fleet/plugins}
# shellcheck source=../go-build.sh
source "$here/../go-build.sh"
go_build_cached kubeconfig-oracle "$here" "$cache_root/kubeconfig-oracle-$hash"
