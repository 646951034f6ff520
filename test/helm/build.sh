#!/usr/bin/env bash
# Builds Helm v3 (helm.sh/helm/v3/cmd/helm at the version pinned in go.mod) into a cache outside the repository, keyed
# by that version and a hash of go.mod, go.sum and this script, and reuses what is already there. test/e2e/chart.test.ts lints,
# renders, packages, pushes and installs deploy/chart with it; the release dry run packages the chart with it. Prints
# the binary's path on its last stdout line (progress goes to stderr).
#   FLEET_HELM_CACHE   cache root (default ${XDG_CACHE_HOME:-$HOME/.cache}/fleet/helm)
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
VERSION=$(awk '$1=="require" && $2=="helm.sh/helm/v3"{print $3; exit}' "$here/go.mod")
[ -n "$VERSION" ] || { echo "error: no helm.sh/helm/v3 version in $here/go.mod" >&2; exit 1; }
inputs=$(cat "$here/go.mod" "$here/go.sum" "$here/build.sh" | sha256sum | cut -c1-12)
out=${FLEET_HELM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/fleet/helm}/helm-$VERSION-$inputs
mkdir -p "$out"
# shellcheck source=../build-lock.sh
source "$here/../build-lock.sh"
build_lock "$out"

if [ -x "$out/helm" ]; then
  echo "reuse $out/helm" >&2
else
  command -v go >/dev/null || { echo "error: helm is not in $out and Go is not installed to build it" >&2; exit 1; }
  # Stamped as upstream's Makefile does: `helm version` names the release under test rather than a development build,
  # and the Kubernetes version helm template and helm lint assume without a cluster is that of the client-go it is
  # built with (the source's default is 1.20, under the chart's kubeVersion).
  k8s=$(awk '$1=="k8s.io/client-go"{print $2; exit}' "$here/go.mod")
  [ -n "$k8s" ] || { echo "error: no k8s.io/client-go version in $here/go.mod" >&2; exit 1; }
  minor=${k8s#v0.}; minor=${minor%%.*}
  ldflags="-s -w -X helm.sh/helm/v3/internal/version.version=$VERSION -X helm.sh/helm/v3/internal/version.gitTreeState=clean"
  for pkg in helm.sh/helm/v3/pkg/lint/rules helm.sh/helm/v3/pkg/chartutil; do
    ldflags+=" -X $pkg.k8sVersionMajor=1 -X $pkg.k8sVersionMinor=$minor"
  done
  start=$SECONDS
  echo "build helm $VERSION (helm.sh/helm/v3/cmd/helm, the Go module in $here) into $out" >&2
  (cd "$here" && CGO_ENABLED=0 go build -trimpath -ldflags "$ldflags" -o "$out/.helm.tmp" helm.sh/helm/v3/cmd/helm)
  mv "$out/.helm.tmp" "$out/helm"
  echo "built helm in $((SECONDS - start))s" >&2
fi
echo "$out/helm"
