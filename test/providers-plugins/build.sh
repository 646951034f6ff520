#!/usr/bin/env bash
# Builds the reference credential plugins of sigs.k8s.io/cluster-inventory-api (secretreader, kubeconfig-secretreader)
# from the module version pinned in go.mod into a cache outside the repository, keyed by that version, and reuses what
# is already there. The e2e tests of the cluster-inventory provider run them. Prints the directory that holds the two
# binaries on its last stdout line (progress goes to stderr).
#   FLEET_PLUGINS_CACHE   cache root (default ${XDG_CACHE_HOME:-$HOME/.cache}/fleet/plugins)
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
VERSION=$(awk '$1=="require" && $2=="sigs.k8s.io/cluster-inventory-api"{print $3; exit} $1=="sigs.k8s.io/cluster-inventory-api"{print $2; exit}' "$here/go.mod")
[ -n "$VERSION" ] || { echo "error: no sigs.k8s.io/cluster-inventory-api version in $here/go.mod" >&2; exit 1; }
cache_root=${FLEET_PLUGINS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/fleet/plugins}
out="$cache_root/cluster-inventory-api-$VERSION"
mkdir -p "$out"

# shellcheck source=../build-lock.sh
source "$here/../build-lock.sh"
build_lock "$out"

for spec in secretreader:sigs.k8s.io/cluster-inventory-api/plugins/secretreader/cmd/plugin \
            kubeconfig-secretreader:sigs.k8s.io/cluster-inventory-api/plugins/kubeconfig-secretreader/cmd/plugin; do
  name=${spec%%:*} pkg=${spec#*:}
  if [ -x "$out/$name" ]; then echo "reuse $out/$name" >&2; continue; fi
  if ! command -v go >/dev/null; then
    echo "error: $name is not in $out and Go is not installed to build it" >&2
    exit 1
  fi
  start=$SECONDS
  echo "build $name ($pkg@$VERSION) into $out" >&2
  (cd "$here" && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$out/.$name.tmp" "$pkg")
  mv "$out/.$name.tmp" "$out/$name"
  echo "built $name in $((SECONDS - start))s" >&2
done
echo "$out"
