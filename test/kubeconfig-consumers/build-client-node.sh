#!/usr/bin/env bash
# Installs @kubernetes/client-node (npm) from client-node/package-lock.json, which pins it at 2.0.1 with every
# dependency, into a cache outside the repository keyed by that version and a hash of the lockfile, and reuses what is
# already there: a Node.js program reading what `fleet kubeconfig export` wrote is a user as much as client-go's and
# Python's are, and client-node runs exec plugins its own way (spawned without a shell, no KUBERNETES_EXEC_INFO).
# list-namespaces.mjs is copied beside the package; the cache holds node_modules, the script, and `run`, a sh wrapper
# that runs it with the first `node` on PATH (for the tests, Node 24 of fleet's devDependencies). Prints the wrapper's
# path on its last stdout line (progress goes to stderr).
#   FLEET_CLIENT_NODE_CACHE   cache root (default ${XDG_CACHE_HOME:-$HOME/.cache}/fleet)
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
package=$here/client-node
version=$(sed -n 's/.*"@kubernetes\/client-node": "\(.*\)".*/\1/p' "$package/package.json")
[ -n "$version" ] || { echo "error: no @kubernetes/client-node in $package/package.json" >&2; exit 1; }
key=$(sha256sum <"$package/package-lock.json" | cut -c1-16)
out=${FLEET_CLIENT_NODE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/fleet}/client-node-$version-$key
mkdir -p "$out"
# shellcheck source=../build-lock.sh
source "$here/../build-lock.sh"
build_lock "$out"
if [ -f "$out/.complete" ]; then
  echo "reuse $out" >&2
else
  command -v npm >/dev/null || { echo "error: npm is not installed (@kubernetes/client-node is installed with it)" >&2; exit 1; }
  start=$SECONDS
  echo "install @kubernetes/client-node $version (npm ci of $package/package-lock.json) into $out" >&2
  rm -rf "$out/node_modules"
  cp "$package/package.json" "$package/package-lock.json" "$out/"
  # npm's own output (its summary line) goes to stderr too, so the last stdout line stays the wrapper's path.
  (cd "$out" && npm ci --no-audit --no-fund --loglevel=error >&2)
  touch "$out/.complete"
  echo "installed in $((SECONDS - start))s" >&2
fi
# The script and its wrapper are laid anew on every run (the key is the lockfile's, so an edit of list-namespaces.mjs
# needs no new install), each by a rename, so a program already running the old one never reads half a file.
cp "$package/list-namespaces.mjs" "$out/.list-namespaces.mjs.tmp"
mv "$out/.list-namespaces.mjs.tmp" "$out/list-namespaces.mjs"
cat >"$out/.run.tmp" <<'WRAPPER'
#!/bin/sh
# @kubernetes/client-node's list-namespaces.mjs (test/kubeconfig-consumers/build-client-node.sh), with the first node on
# PATH: reads client-node's default kubeconfig (KUBECONFIG, else ~/.kube/config) and takes no arguments.
here=$(cd "$(dirname "$0")" && pwd)
exec node "$here/list-namespaces.mjs" "$@"
WRAPPER
chmod 0755 "$out/.run.tmp"
mv "$out/.run.tmp" "$out/run"
echo "$out/run"
