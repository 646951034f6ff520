#!/usr/bin/env bash
# Builds promparse (main.go: the Prometheus text-format parser of github.com/prometheus/common/expfmt, at the version
# pinned in go.mod) into a cache outside the repository, keyed by that version and a hash of main.go, and reuses what is
# already there. The tests of `-o prometheus` pipe fleet's output through it. Prints the binary's path on its last
# stdout line (progress goes to stderr).
#   FLEET_PROM_PARSER_CACHE   cache root (default ${XDG_CACHE_HOME:-$HOME/.cache}/fleet/prom-parser)
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
VERSION=$(awk '$1=="require" && $2=="github.com/prometheus/common"{print $3; exit}' "$here/go.mod")
[ -n "$VERSION" ] || { echo "error: no github.com/prometheus/common version in $here/go.mod" >&2; exit 1; }
src_hash=$(sha256sum "$here/main.go" "$here/go.sum" | sha256sum | cut -c1-12)
cache_root=${FLEET_PROM_PARSER_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/fleet/prom-parser}
# shellcheck source=../go-build.sh
source "$here/../go-build.sh"
go_build_cached promparse "$here" "$cache_root/common-$VERSION-$src_hash"
