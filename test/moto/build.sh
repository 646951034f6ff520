#!/usr/bin/env bash
# Makes a virtualenv with moto's server (`moto[server]`, a local imitation of the AWS APIs, EKS included) at the version
# pinned below, from PyPI, in a cache outside the repository keyed by that version and the interpreter's; reuses what
# is already there. test/e2e/providers-exec-eks.test.ts starts `moto_server` from it and runs the EKS example program of
# docs/providers.md (docs/examples/providers/eks-clusters.py, boto3, which moto brings) against it. Prints the venv's
# bin directory on its last stdout line (progress goes to stderr).
#   FLEET_PYTHON_CACHE   cache root (default ${XDG_CACHE_HOME:-$HOME/.cache}/fleet/python)
#   PYTHON               the interpreter to make it with (default python3)
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
version=5.2.5
python=${PYTHON:-python3}
command -v "$python" >/dev/null || { echo "error: $python is not installed (moto needs it)" >&2; exit 1; }
pyver=$("$python" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
out=${FLEET_PYTHON_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/fleet/python}/moto-$version-py$pyver
mkdir -p "$out"
# shellcheck source=../build-lock.sh
source "$here/../build-lock.sh"
build_lock "$out"
# A venv is not relocatable (its scripts name its own path), so it is made in place; .complete marks one that finished.
if [ -f "$out/.complete" ]; then
  echo "reuse $out" >&2
else
  start=$SECONDS
  echo "make a venv with moto[server]==$version (Python $pyver) in $out" >&2
  rm -rf "$out/venv"
  "$python" -m venv "$out/venv"
  "$out/venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-input "moto[server]==$version" >&2
  touch "$out/.complete"
  echo "made in $((SECONDS - start))s" >&2
fi
echo "$out/venv/bin"
