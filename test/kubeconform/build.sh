#!/usr/bin/env bash
# Builds kubeconform (github.com/yannh/kubeconform/cmd/kubeconform at the version of github.com/yannh/kubeconform pinned in go.mod) into a cache outside the repository, keyed by that version and
# a hash of go.mod and go.sum, and reuses what is already there. test/e2e/chart.test.ts validates what deploy/chart and deploy/kustomize render with it, against schemas made offline from the control plane's OpenAPI (test/support/kube-schemas.ts). Prints the binary's path on its last stdout line
# (progress goes to stderr).
#   FLEET_KUBECONFORM_CACHE   cache root (default ${XDG_CACHE_HOME:-$HOME/.cache}/fleet/kubeconform)
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
VERSION=$(awk '$1=="require" && $2=="github.com/yannh/kubeconform"{print $3; exit}' "$here/go.mod")
[ -n "$VERSION" ] || { echo "error: no github.com/yannh/kubeconform version in $here/go.mod" >&2; exit 1; }
inputs=$(cat "$here/go.mod" "$here/go.sum" | sha256sum | cut -c1-12)
cache_root=${FLEET_KUBECONFORM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/fleet/kubeconform}
# shellcheck source=../go-build.sh
source "$here/../go-build.sh"
go_build_cached kubeconform "$here" "$cache_root/kubeconform-$VERSION-$inputs" github.com/yannh/kubeconform/cmd/kubeconform
