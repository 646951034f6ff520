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
out="$cache_root/common-$VERSION-$src_hash"
mkdir -p "$out"

# shellcheck source=../build-lock.sh
source "$here/../build-lock.sh"
build_lock "$out"

if [ -x "$out/promparse" ]; then
  echo "reuse $out/promparse" >&2
else
  if ! command -v go >/dev/null; then
    echo "error: promparse is not in $out and Go is not installed to build it" >&2
    exit 1
  fi
  start=$SECONDS
  echo "build promparse (github.com/prometheus/common@$VERSION) into $out" >&2
  (cd "$here" && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$out/.promparse.tmp" .)
  mv "$out/.promparse.tmp" "$out/promparse"
  echo "built promparse in $((SECONDS - start))s" >&2
fi
echo "$out/promparse"
