# Sourced by the scripts that build fleet's Go helper programs (test/prom-parser, bench/reference): each is a small Go
# module in the repository whose binary is cached outside it under a key the caller derives from what it pins, so a
# cold machine builds it once and every later run reuses it.
# Usage: go_build_cached NAME MODULE_DIR OUT_DIR [PACKAGE]   (PACKAGE: a main package of the module, default .; prints
# OUT_DIR/NAME on stdout; progress goes to stderr)
here_go_build=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=build-lock.sh
source "$here_go_build/build-lock.sh"

go_build_cached() {
  local name=$1 dir=$2 out=$3 pkg=${4:-.}
  mkdir -p "$out"
  build_lock "$out"
  if [ -x "$out/$name" ]; then
    echo "reuse $out/$name" >&2
  else
    command -v go >/dev/null || { echo "error: $name is not in $out and Go is not installed to build it" >&2; return 1; }
    local start=$SECONDS
    echo "build $name (the Go module in $dir) into $out" >&2
    (cd "$dir" && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$out/.$name.tmp" "$pkg")
    mv "$out/.$name.tmp" "$out/$name"
    echo "built $name in $((SECONDS - start))s" >&2
  fi
  echo "$out/$name"
}
