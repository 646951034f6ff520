#!/usr/bin/env bash
# Builds kubectl from the k8s.io/kubectl module pinned in go.mod (main.go: the upstream command constructor) into a
# cache outside the repository, keyed by that version and a hash of go.mod, go.sum and main.go, and reuses what is
# already there. test/e2e/kuberc-kubectl.test.ts runs it on kuberc files: the control plane's kubectl is another minor
# version, and the credential plugin policy of kuberc is kubectl 1.35's. Prints the binary's path on its last stdout line
# (progress goes to stderr).
#   FLEET_KUBECTL_135_CACHE   cache root (default ${XDG_CACHE_HOME:-$HOME/.cache}/fleet/kubectl-135)
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
version=$(awk '$1=="k8s.io/kubectl"{print $2; exit}' "$here/go.mod")
hash=$(cat "$here/go.mod" "$here/go.sum" "$here/main.go" | sha256sum | cut -c1-12)
out=${FLEET_KUBECTL_135_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/fleet/kubectl-135}/kubectl-$version-$hash
mkdir -p "$out"
# shellcheck source=../build-lock.sh
source "$here/../build-lock.sh"
build_lock "$out"

if [ -x "$out/kubectl" ]; then
  echo "reuse $out/kubectl" >&2
else
  command -v go >/dev/null || { echo "error: kubectl is not in $out and Go is not installed to build it" >&2; exit 1; }
  # The module's v0.X.Y is Kubernetes v1.X.Y; stamped so that `kubectl version --client` names the release under test.
  k8s=v1.${version#v0.}
  minor=${k8s#v1.}; minor=${minor%%.*}
  ldflags="-s -w"
  for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    ldflags+=" -X $pkg.gitVersion=$k8s -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor -X $pkg.gitTreeState=clean"
  done
  start=$SECONDS
  echo "build kubectl $k8s (k8s.io/kubectl $version, the Go module in $here) into $out" >&2
  (cd "$here" && CGO_ENABLED=0 go build -trimpath -ldflags "$ldflags" -o "$out/.kubectl.tmp" .)
  mv "$out/.kubectl.tmp" "$out/kubectl"
  echo "built kubectl in $((SECONDS - start))s" >&2
fi
echo "$out/kubectl"
