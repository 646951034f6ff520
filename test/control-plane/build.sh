#!/usr/bin/env bash
# Builds the test control plane (kube-apiserver, kube-controller-manager, kubectl, etcd) from the Go modules pinned in
# go.mod into a cache outside the repository, keyed by version, and reuses what is already there.
# Prints the directory that holds the four binaries on its last stdout line (progress goes to stderr).
#
# Binaries you already have are used instead of building, with envtest's conventions:
#   KUBEBUILDER_ASSETS=<dir with kube-apiserver, etcd, kubectl>   (envtest's setup-envtest layout)
#   TEST_ASSET_KUBE_APISERVER, TEST_ASSET_ETCD, TEST_ASSET_KUBECTL   (one binary each; win over KUBEBUILDER_ASSETS)
#   TEST_ASSET_KUBE_CONTROLLER_MANAGER                              (fleet's addition: envtest has no such binary)
# envtest directories carry no kube-controller-manager, so that one is still built unless given. When any binary comes
# from outside, the printed directory holds symlinks to the chosen files.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
K8S_VERSION=$(awk '$1=="k8s.io/kubernetes"{print $2; exit}' "$here/go.mod")
ETCD_VERSION=$(awk '$1=="go.etcd.io/etcd/server/v3"{print $2; exit}' "$here/go.mod")
cache_root=${FLEET_CONTROL_PLANE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/fleet/control-plane}
out="$cache_root/k8s-$K8S_VERSION-etcd-$ETCD_VERSION"
mkdir -p "$out"

# shellcheck source=../build-lock.sh
source "$here/../build-lock.sh"
build_lock "$out"

minor=${K8S_VERSION#v1.}; minor=${minor%%.*}
ldflags="-s -w"
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  ldflags+=" -X $pkg.gitVersion=$K8S_VERSION -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor -X $pkg.gitTreeState=clean"
done

given() { # name envvar -> prints the path of a binary supplied from outside, if any
  local name=$1 var=$2 path="" from=""
  if [ -n "${!var:-}" ]; then path=${!var}; from=$var
  elif [ -n "${KUBEBUILDER_ASSETS:-}" ] && [ -e "$KUBEBUILDER_ASSETS/$name" ]; then path=$KUBEBUILDER_ASSETS/$name; from=KUBEBUILDER_ASSETS
  fi
  if [ -n "$path" ] && [ ! -x "$path" ]; then
    echo "error: $name from $from is not an executable file: $path" >&2
    exit 1
  fi
  [ -n "$path" ] && (cd "$(dirname "$path")" && echo "$(pwd)/$(basename "$path")")
  return 0
}

build() { # name package [ldflags]
  local name=$1 pkg=$2 flags=${3:-$ldflags}
  if [ -x "$out/$name" ]; then echo "reuse $out/$name" >&2; return; fi
  if ! command -v go >/dev/null; then
    echo "error: $name is not in $out and Go is not installed to build it (or set the TEST_ASSET_* / KUBEBUILDER_ASSETS variables)" >&2
    exit 1
  fi
  local start=$SECONDS
  echo "build $name ($pkg) into $out" >&2
  (cd "$here" && CGO_ENABLED=0 go build -trimpath -ldflags "$flags" -o "$out/.$name.tmp" "$pkg")
  mv "$out/.$name.tmp" "$out/$name"
  echo "built $name in $((SECONDS - start))s" >&2
}

declare -A chosen=()
external=0
for spec in etcd:TEST_ASSET_ETCD:go.etcd.io/etcd/server/v3 \
            kube-apiserver:TEST_ASSET_KUBE_APISERVER:k8s.io/kubernetes/cmd/kube-apiserver \
            kube-controller-manager:TEST_ASSET_KUBE_CONTROLLER_MANAGER:k8s.io/kubernetes/cmd/kube-controller-manager \
            kubectl:TEST_ASSET_KUBECTL:k8s.io/kubernetes/cmd/kubectl; do
  IFS=: read -r name var pkg <<<"$spec"
  path=$(given "$name" "$var")
  if [ -n "$path" ]; then
    echo "use $path ($name from outside)" >&2
    chosen[$name]=$path; external=1
  else
    # etcd keeps its own version stamping; the -X keys above belong to Kubernetes.
    if [ "$name" = etcd ]; then build etcd "$pkg" "-s -w"; else build "$name" "$pkg"; fi
    chosen[$name]=$out/$name
  fi
done

if [ "$external" = 0 ]; then
  echo "$out"
  exit 0
fi
key=$(printf '%s\n' "${chosen[etcd]}" "${chosen[kube-apiserver]}" "${chosen[kube-controller-manager]}" "${chosen[kubectl]}" | sha256sum | cut -c1-12)
linked="$cache_root/linked-$key"
mkdir -p "$linked"
for name in "${!chosen[@]}"; do ln -sfn "${chosen[$name]}" "$linked/$name"; done
echo "$linked"
