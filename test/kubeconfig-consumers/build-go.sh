#!/usr/bin/env bash
# Builds kubeconfig-consumer (bench/reference/kubeconfig-consumer/main.go: client-go loading a kubeconfig and listing
# namespaces through every context) from the modules bench/reference already pins, into a cache outside the
# repository keyed by a hash of that module's go.mod and go.sum and the program, and reuses what is already there. No
# module of its own: a second main package of the reference's module adds no dependency tree to CI, and its packages
# are already compiled in Go's build cache by bench/reference/build.sh. test/e2e/kubeconfig-merge.test.ts runs it.
# Prints the binary's path on its last stdout line (progress goes to stderr).
#   FLEET_REFERENCE_CACHE   cache root (default ${XDG_CACHE_HOME:-$HOME/.cache}/fleet/bench-reference)
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
module=$(cd "$here/../../bench/reference" && pwd)
key=$(cat "$module/go.mod" "$module/go.sum" "$module/kubeconfig-consumer/main.go" | sha256sum | cut -c1-16)
cache_root=${FLEET_REFERENCE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/fleet/bench-reference}
# shellcheck source=../go-build.sh
source "$here/../go-build.sh"
go_build_cached kubeconfig-consumer "$module" "$cache_root/kubeconfig-consumer-$key" ./kubeconfig-consumer
