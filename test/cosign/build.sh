#!/usr/bin/env bash
# Builds cosign (github.com/sigstore/cosign/v2/cmd/cosign at the version pinned in go.mod) into a cache outside the
# repository, keyed by that version and a hash of go.mod and go.sum, and reuses what is already there.
# test/e2e/release.test.ts signs the release dry run's checksums.txt and blobs with a key it generates and verifies
# them with cosign. Prints the binary's path on its last stdout line (progress goes to stderr).
#   FLEET_COSIGN_CACHE   cache root (default ${XDG_CACHE_HOME:-$HOME/.cache}/fleet/cosign)
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
VERSION=$(awk '$1=="require" && $2=="github.com/sigstore/cosign/v2"{print $3; exit}' "$here/go.mod")
[ -n "$VERSION" ] || { echo "error: no github.com/sigstore/cosign/v2 version in $here/go.mod" >&2; exit 1; }
inputs=$(cat "$here/go.mod" "$here/go.sum" | sha256sum | cut -c1-12)
cache_root=${FLEET_COSIGN_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/fleet/cosign}
# shellcheck source=../go-build.sh
source "$here/../go-build.sh"
go_build_cached cosign "$here" "$cache_root/cosign-$VERSION-$inputs" github.com/sigstore/cosign/v2/cmd/cosign
