#!/usr/bin/env bash
# Builds credential-oracle (main.go: fleet-credential's cache reading, package cmd/fleet-credential/cache, answering
# many calls in one process) into a cache outside the repository, keyed by the hash of both modules' source, and reuses
# what is there. test/unit/credential-reader.test.ts runs it for the differential test of issue 38 (item 4). Prints
# the binary's path on its last stdout line (progress goes to stderr).
#   FLEET_CREDENTIAL_ORACLE_CACHE   cache root (default ${XDG_CACHE_HOME:-$HOME/.cache}/fleet/credential-oracle)
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
reader="$here/../../cmd/fleet-credential"
key=$(cat "$here/go.mod" "$here/main.go" "$reader/go.mod" "$reader"/cache/*.go | sha256sum | cut -c1-16)
cache_root=${FLEET_CREDENTIAL_ORACLE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/fleet/credential-oracle}
# shellcheck source=../go-build.sh
source "$here/../go-build.sh"
go_build_cached credential-oracle "$here" "$cache_root/$key"
