# Sourced by the build scripts of test binaries. A test run and a developer's sandbox may build at once; on a 2-core
# machine one waits for the other instead of both compiling, and neither renames half-written files over the other's.
# Usage: build_lock DIR   (holds DIR/.build.lock on fd 9 until the script exits)
build_lock() {
  exec 9>"$1/.build.lock"
  if ! flock -n 9; then
    echo "another build holds $1/.build.lock; waiting for it" >&2
    flock 9
  fi
}
