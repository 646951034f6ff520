#!/usr/bin/env bash
# Builds the fabric8 kubernetes-client consumer (fabric8/: pom.xml pins io.fabric8 7.9.0 through its BOM, and
# ListNamespaces.java lists namespaces through every context of fabric8's default kubeconfig) with Maven from Maven
# Central, into a cache outside the repository keyed by the fabric8 version and a hash of the pom and the sources, and
# reuses what is already there. The output is a classpath directory (classes/ and lib/, the runtime dependency jars)
# and `run`, a sh wrapper; the Java programs that read what `fleet kubeconfig export` wrote are as much its users as
# client-go's and Python's are, and fabric8 runs exec plugins its own way (`sh -c`, no KUBERNETES_EXEC_INFO).
# Prints the wrapper's path on its last stdout line (progress, and Maven's own output, go to stderr).
#   FLEET_JAVA_CACHE   cache root (default ${XDG_CACHE_HOME:-$HOME/.cache}/fleet); the Maven repository is its maven/
#   JAVA_HOME          the JDK to build with and to run (default: javac and java on PATH); Java 17 or newer
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
project=$here/fabric8
version=$(sed -n 's:.*<fabric8.version>\(.*\)</fabric8.version>.*:\1:p' "$project/pom.xml")
[ -n "$version" ] || { echo "error: no <fabric8.version> in $project/pom.xml" >&2; exit 1; }
key=$( (cd "$project" && find pom.xml src -type f | LC_ALL=C sort | xargs cat) | sha256sum | cut -c1-16)
root=${FLEET_JAVA_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/fleet}
out=$root/fabric8-$version-$key
mkdir -p "$out"
# shellcheck source=../build-lock.sh
source "$here/../build-lock.sh"
build_lock "$out"
if [ -f "$out/.complete" ]; then
  echo "reuse $out" >&2
else
  command -v mvn >/dev/null || { echo "error: mvn is not installed (the fabric8 consumer is built with Maven)" >&2; exit 1; }
  java=${JAVA_HOME:+$JAVA_HOME/bin/}java
  command -v "$java" >/dev/null || { echo "error: $java is not installed (the fabric8 consumer needs Java 17 or newer)" >&2; exit 1; }
  start=$SECONDS
  echo "build the fabric8 kubernetes-client $version consumer with Maven into $out (Maven repository $root/maven)" >&2
  # Built in a copy, so no target/ is left in the repository; .complete marks an output that finished.
  rm -rf "$out/build" "$out/classes" "$out/lib" "$out/run"
  mkdir -p "$out/build"
  cp -R "$project/pom.xml" "$project/src" "$out/build/"
  # -q leaves only errors, which Maven prints on stdout: sent to stderr so the last stdout line stays the wrapper (less
  # the bare colour resets that Maven 3.8 prints even in batch mode).
  mvn -B -q -Dstyle.color=never -f "$out/build/pom.xml" -Dmaven.repo.local="$root/maven" \
    compile dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory="$out/build/lib" 2>&1 |
    sed 's/\x1b\[0m//g' >&2
  mv "$out/build/target/classes" "$out/classes"
  mv "$out/build/lib" "$out/lib"
  rm -rf "$out/build"
  cat >"$out/run" <<'EOF'
#!/bin/sh
# fabric8 kubernetes-client's ListNamespaces (test/kubeconfig-consumers/build-java.sh): reads fabric8's default
# kubeconfig (KUBECONFIG, else ~/.kube/config) and takes no arguments. JAVA_HOME picks the JVM (default: java on PATH).
# A short-lived client: the C1 compiler and the serial collector start it faster on a small machine.
here=$(cd "$(dirname "$0")" && pwd)
exec "${JAVA_HOME:+$JAVA_HOME/bin/}java" -XX:TieredStopAtLevel=1 -XX:+UseSerialGC \
  -cp "$here/classes:$here/lib/*" fleet.consumers.ListNamespaces "$@"
EOF
  chmod 0755 "$out/run"
  touch "$out/.complete"
  echo "built in $((SECONDS - start))s ($(ls "$out/lib" | wc -l) jars)" >&2
fi
echo "$out/run"
