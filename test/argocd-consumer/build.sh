#!/usr/bin/env bash
# Builds argocd-consumer (Argo CD's own code at the version in go.mod: its v1alpha1 cluster types reading a cluster Secret,
# `argocd cluster add`'s RBAC and database layer writing one; main.go) into a cache outside the repository, keyed by a
# hash of go.mod, go.sum and every .go file, and reuses what is already there. The e2e tests of `fleet wi token` and of
# the argocd provider run it. Prints the
# binary's path on its last stdout line (progress goes to stderr).
#   FLEET_PLUGINS_CACHE   cache root (default ${XDG_CACHE_HOME:-$HOME/.cache}/fleet/plugins)
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
hash=$(cat "$here/go.mod" "$here/go.sum" "$here"/*.go | sha256sum | cut -c1-12)
cache_root=${FLEET_PLUGINS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/fleet/plugins}
# shellcheck source=../go-build.sh
source "$here/../go-build.sh"
go_build_cached argocd-consumer "$here" "$cache_root/argocd-consumer-$hash"
