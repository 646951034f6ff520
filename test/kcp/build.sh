#!/usr/bin/env bash
# Builds kcp and kcp-front-proxy from the Go module pinned in go.mod into a cache outside the repository, keyed by the
# kcp version and a hash of what goes into the build, and reuses what is already there.
# Prints the directory that holds the two binaries on its last stdout line (progress goes to stderr).
#
# Binaries you already have are used instead of building: FLEET_KCP_BIN_DIR=<dir with kcp and kcp-front-proxy>.
#
# Why the work directory: virtual-workspace-framework, a staging module of kcp, is not on the module proxy at v0.32.3.
# The newest published release (v0.31.2, the version go.mod replaces it with) lacks one function kcp v0.32.3 calls.
# Go does not let a build overlay touch the module cache, so the build copies that module from the cache into a
# work directory, adds vwf-patch/fleet_path_segment.go.in, and points a generated go.work at the copy.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

if [ -n "${FLEET_KCP_BIN_DIR:-}" ]; then
  for name in kcp kcp-front-proxy; do
    if [ ! -x "$FLEET_KCP_BIN_DIR/$name" ]; then
      echo "error: FLEET_KCP_BIN_DIR has no executable $name: $FLEET_KCP_BIN_DIR/$name" >&2
      exit 1
    fi
  done
  echo "use $FLEET_KCP_BIN_DIR (FLEET_KCP_BIN_DIR)" >&2
  (cd "$FLEET_KCP_BIN_DIR" && pwd)
  exit 0
fi

KCP_VERSION=$(awk '$1=="require" && $2=="github.com/kcp-dev/kcp"{print $3; exit}' "$here/go.mod")
K8S_VERSION=$(awk '$1=="k8s.io/kubernetes" && $2 ~ /^v/ {print $2; exit}' "$here/go.mod")
inputs=$(cat "$here/go.mod" "$here/go.sum" "$here/vwf-patch/fleet_path_segment.go.in" | sha256sum | cut -c1-12)
cache_root=${FLEET_KCP_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/fleet/kcp}
out="$cache_root/kcp-$KCP_VERSION-$inputs"
mkdir -p "$out"

# shellcheck source=../build-lock.sh
source "$here/../build-lock.sh"
build_lock "$out"

if [ -x "$out/kcp" ] && [ -x "$out/kcp-front-proxy" ]; then
  echo "reuse $out/kcp, $out/kcp-front-proxy" >&2
  echo "$out"
  exit 0
fi
if ! command -v go >/dev/null; then
  echo "error: kcp is not in $out and Go is not installed to build it (or set FLEET_KCP_BIN_DIR)" >&2
  exit 1
fi

# The checksum database has no entries for kcp's fork pseudo-versions (its lookups answer 404);
# go.sum, committed beside go.mod, pins every module's hash instead.
export GONOSUMDB=${GONOSUMDB:+$GONOSUMDB,}github.com/kcp-dev/*
export GOFLAGS="${GOFLAGS:-} -mod=readonly"

start=$SECONDS
work=$(mktemp -d "${TMPDIR:-/tmp}/fleet-kcp-build.XXXXXX")
trap 'chmod -R u+w "$work" 2>/dev/null; rm -rf "$work"' EXIT
vwf=$(cd "$here" && go mod download -json github.com/kcp-dev/virtual-workspace-framework | awk -F'"' '$2=="Dir"{print $4; exit}')
if [ -z "$vwf" ] || [ ! -d "$vwf/pkg/forwardingregistry" ]; then
  echo "error: could not download github.com/kcp-dev/virtual-workspace-framework (see go.mod)" >&2
  exit 1
fi
cp -r "$vwf" "$work/virtual-workspace-framework"
chmod -R u+w "$work/virtual-workspace-framework"
cp "$here/vwf-patch/fleet_path_segment.go.in" "$work/virtual-workspace-framework/pkg/forwardingregistry/fleet_path_segment.go"
go_version=$(awk '$1=="go"{print $2; exit}' "$here/go.mod")
cat >"$work/go.work" <<EOF
go $go_version

use $here

replace github.com/kcp-dev/virtual-workspace-framework => $work/virtual-workspace-framework
EOF

# kcp's Makefile stamps the same keys: the Kubernetes version it is built on, +kcp-<release>.
minor=${K8S_VERSION#v1.}; minor=${minor%%.*}
git_version="$K8S_VERSION+kcp-$KCP_VERSION"
ldflags="-s -w"
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  ldflags+=" -X $pkg.gitVersion=$git_version -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor -X $pkg.gitTreeState=clean"
done

echo "build kcp, kcp-front-proxy ($KCP_VERSION) into $out" >&2
mkdir -p "$work/bin"
(cd "$here" && GOWORK="$work/go.work" CGO_ENABLED=0 go build -trimpath -ldflags "$ldflags" -o "$work/bin/" \
  github.com/kcp-dev/kcp/cmd/kcp github.com/kcp-dev/kcp/cmd/kcp-front-proxy)
for name in kcp kcp-front-proxy; do mv "$work/bin/$name" "$out/.$name.tmp" && mv "$out/.$name.tmp" "$out/$name"; done
echo "built kcp, kcp-front-proxy in $((SECONDS - start))s" >&2
echo "$out"
