#!/usr/bin/env bash
# Builds exec-oracle (main.go: Go's exec.LookPath/exec.Command and client-go 1.35's credential plugin allowlist check,
# at the k8s.io/client-go version pinned in go.mod) into a cache outside the repository, keyed by that version and a hash
# of go.mod, go.sum and main.go, and reuses what is already there. test/unit/invocation-properties.test.ts asks it the
# questions it asks fleet. Prints the binary's path on its last stdout line (progress goes to stderr).
#   FLEET_EXEC_ORACLE_CACHE   cache root (default ${XDG_CACHE_HOME:-$HOME/.cache}/fleet/exec-oracle)
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
VERSION=$(awk '$1=="require" && $2=="k8s.io/client-go"{print $3; exit}' "$here/go.mod")
[ -n "$VERSION" ] || { echo "error: no k8s.io/client-go version in $here/go.mod" >&2; exit 1; }
src_hash=$(cat "$here/go.mod" "$here/go.sum" "$here/main.go" | sha256sum | cut -c1-12)
cache_root=${FLEET_EXEC_ORACLE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/fleet/exec-oracle}
# shellcheck source=../go-build.sh
source "$here/../go-build.sh"
go_build_cached exec-oracle "$here" "$cache_root/client-go-$VERSION-$src_hash"
