#!/usr/bin/env bash
# Builds the container images of the local cluster's real node
# (`localcluster up --real-node`) without any registry, and prints, as the
# last line of stdout, the directory that holds them:
#
#   <repo>/.cache/realnode-images/<hash>/{pause,busybox,python3,python-runtime,sandboxd,sandbox-router}.tar
#
# Each .tar is an OCI image archive (oci-layout, index.json, blobs) with one
# uncompressed layer, importable with `ctr -n k8s.io images import`, which
# localcluster does at `up`. The images:
#
#   localhost/localcluster/pause:3.10     a 20-line static C pause (built with gcc -static)
#   localhost/localcluster/busybox:1.35   Debian's busybox-static and its applet links
#   localhost/localcluster/python3:3.11   a Debian bookworm minbase root file system made by
#                                         debootstrap (+ python3, and Debian's FastAPI, uvicorn and
#                                         python-multipart for python-runtime) from the same mirror
#                                         apt uses
#   localhost/localcluster/python-runtime:<v>  the python3 root file system plus upstream's legacy
#                                         Python runtime (examples/python-runtime-sandbox/main.py,
#                                         the API the SDKs' default runtime calls through the
#                                         router) in /app, USER 1000, uvicorn on 8888, as its
#                                         Dockerfile does (with Debian's packages instead of pip's)
#   localhost/localcluster/sandboxd:<v>   the python3 root file system plus upstream's sandboxd
#                                         (packages/sandboxd/cmd/sandboxd) at /usr/local/bin,
#                                         /workspace owned by 1000, USER 1000, WORKDIR /workspace,
#                                         as packages/sandboxd/Dockerfile does (on python3, not
#                                         debian-slim: a Python/sandboxd sandbox)
#   localhost/localcluster/sandbox-router:<v>  upstream's router (sandbox-router/cmd), static,
#                                         alone, USER 65532 (its Dockerfile: distroless static nonroot)
#
# <v> is the version of sigs.k8s.io/agent-sandbox in the repository's go.mod
# (the release the provider models by default); both binaries are built
# CGO_ENABLED=0 from that module's own source in the Go module cache, with its
# own go.mod and go.sum, as their Dockerfiles do (dependencies come from the
# Go module proxy; nothing is pulled from an image registry).
#
# <hash> covers this script, the Debian package versions apt would install and
# the agent-sandbox version and Go toolchain, so an unchanged input reuses the
# cached images at once. Needs root (debootstrap), gcc with static libc
# (libc6-dev), apt-get, debootstrap, dpkg-deb, tar, sha256sum, go.
# Environment:
#   REALNODE_IMAGES_CACHE   where images are kept (default <repo>/.cache/realnode-images)
#   REALNODE_IMAGES_FORCE=1 rebuild even if cached
#   REALNODE_MIRROR         Debian mirror for debootstrap (default: the first deb.debian.org-style
#                           URI in apt's sources, else http://deb.debian.org/debian)
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(git -C "$here" rev-parse --show-toplevel 2>/dev/null || (cd "$here/.." && pwd))"
suite=bookworm

log() { echo "realnode-images: $*" >&2; }
die() { log "$*"; exit 1; }

[[ $(id -u) == 0 ]] || die "must run as root (debootstrap)"
for tool in gcc apt-get apt-cache debootstrap dpkg-deb tar sha256sum go; do
  command -v "$tool" >/dev/null || die "$tool not found (Debian: apt-get install gcc libc6-dev debootstrap)"
done

mirror="${REALNODE_MIRROR:-}"
if [[ -z $mirror ]]; then
  mirror="$(grep -rhoE '^(URIs:|deb)[[:space:]]+https?://[^[:space:]]+/debian/?([[:space:]]|$)' /etc/apt/sources.list /etc/apt/sources.list.d/ 2>/dev/null |
    grep -oE 'https?://[^[:space:]]+' | grep -v security | head -n1 || true)"
  mirror="${mirror:-http://deb.debian.org/debian}"
fi

version_of() { apt-cache policy "$1" 2>/dev/null | awk '/Candidate:/ {print $2}'; }
busybox_version="$(version_of busybox-static)"
python_version="$(version_of python3)"
[[ -n $busybox_version && $busybox_version != "(none)" ]] || die "apt knows no busybox-static: run apt-get update first"

# The agent-sandbox release whose router and sandboxd are built, and its source.
read -r as_version as_dir < <(cd "$repo" && go list -m -f '{{.Version}} {{.Dir}}' sigs.k8s.io/agent-sandbox)
[[ -n $as_version && -d $as_dir ]] || die "go list -m sigs.k8s.io/agent-sandbox: no module directory (run go mod download)"
go_version="$(go env GOVERSION)"

hash="$( { cat "${BASH_SOURCE[0]}"; echo "$busybox_version $python_version $mirror $suite $as_version $go_version"; } | sha256sum | cut -c1-12)"
cache="${REALNODE_IMAGES_CACHE:-$repo/.cache/realnode-images}"
out="$cache/$hash"
if [[ -f $out/.complete && ${REALNODE_IMAGES_FORCE:-0} != 1 ]]; then
  log "using cached $out"
  echo "$out"
  exit 0
fi

mkdir -p "$out"
work="$(mktemp -d "$cache/.work.XXXXXX")"
cleanup() {
  # debootstrap may leave /proc or /sys mounted in the target on failure.
  for m in $(awk -v w="$work" '$2 ~ "^"w {print $2}' /proc/self/mounts | sort -r); do umount -l "$m" || true; done
  rm -rf "$work"
}
trap cleanup EXIT

# oci_archive NAME REF ROOTFS CONFIG_JSON_FRAGMENT: writes $out/NAME.tar.
oci_archive() {
  local name="$1" ref="$2" rootfs="$3" config="$4"
  local d="$work/oci-$name"
  mkdir -p "$d/blobs/sha256"
  # Reproducible layer: sorted, numeric owners, fixed times.
  tar --sort=name --numeric-owner --owner=0 --group=0 --mtime=@0 --xattrs --xattrs-include='security.capability' \
    -C "$rootfs" -cf "$d/layer.tar" .
  local layer_digest layer_size
  layer_digest="$(sha256sum "$d/layer.tar" | cut -d' ' -f1)"
  layer_size="$(stat -c %s "$d/layer.tar")"
  mv "$d/layer.tar" "$d/blobs/sha256/$layer_digest"
  printf '{"architecture":"amd64","os":"linux","config":%s,"rootfs":{"type":"layers","diff_ids":["sha256:%s"]},"history":[{"created_by":"scripts/realnode-images.sh"}]}' \
    "$config" "$layer_digest" >"$d/config.json"
  local config_digest config_size
  config_digest="$(sha256sum "$d/config.json" | cut -d' ' -f1)"
  config_size="$(stat -c %s "$d/config.json")"
  mv "$d/config.json" "$d/blobs/sha256/$config_digest"
  printf '{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":{"mediaType":"application/vnd.oci.image.config.v1+json","digest":"sha256:%s","size":%s},"layers":[{"mediaType":"application/vnd.oci.image.layer.v1.tar","digest":"sha256:%s","size":%s}]}' \
    "$config_digest" "$config_size" "$layer_digest" "$layer_size" >"$d/manifest.json"
  local manifest_digest manifest_size
  manifest_digest="$(sha256sum "$d/manifest.json" | cut -d' ' -f1)"
  manifest_size="$(stat -c %s "$d/manifest.json")"
  mv "$d/manifest.json" "$d/blobs/sha256/$manifest_digest"
  printf '{"schemaVersion":2,"mediaType":"application/vnd.oci.image.index.v1+json","manifests":[{"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":"sha256:%s","size":%s,"platform":{"architecture":"amd64","os":"linux"},"annotations":{"io.containerd.image.name":"%s","org.opencontainers.image.ref.name":"%s"}}]}' \
    "$manifest_digest" "$manifest_size" "$ref" "${ref##*:}" >"$d/index.json"
  echo '{"imageLayoutVersion":"1.0.0"}' >"$d/oci-layout"
  tar --sort=name --numeric-owner --owner=0 --group=0 --mtime=@0 -C "$d" -cf "$out/$name.tar.tmp" oci-layout index.json blobs
  mv "$out/$name.tar.tmp" "$out/$name.tar"
  log "$ref -> $out/$name.tar ($(du -h "$out/$name.tar" | cut -f1))"
}

t_all=$(date +%s)

# --- pause: what Kubernetes' pause does: sleep until signalled, reap zombies.
t0=$(date +%s)
mkdir -p "$work/pause/bin"
cat >"$work/pause.c" <<'EOF'
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
static void sigdown(int signo) { (void)signo; _exit(0); }
static void sigreap(int signo) { (void)signo; while (waitpid(-1, NULL, WNOHANG) > 0) {} }
int main(void) {
  struct sigaction down = {.sa_handler = sigdown}, reap = {.sa_handler = sigreap, .sa_flags = SA_NOCLDSTOP};
  if (sigaction(SIGINT, &down, NULL) || sigaction(SIGTERM, &down, NULL) || sigaction(SIGCHLD, &reap, NULL)) return 1;
  for (;;) pause();
}
EOF
gcc -static -Os -s -o "$work/pause/pause" "$work/pause.c"
oci_archive pause localhost/localcluster/pause:3.10 "$work/pause" '{"Entrypoint":["/pause"],"User":"65535:65535"}'
log "pause built in $(( $(date +%s) - t0 ))s"

# --- busybox: Debian's busybox-static, unpacked from its .deb (not the host's copy).
t0=$(date +%s)
(cd "$work" && apt-get -o APT::Sandbox::User=root download busybox-static >/dev/null)
dpkg-deb -x "$work"/busybox-static_*.deb "$work/bbdeb"
bb="$work/busybox"
mkdir -p "$bb/bin" "$bb/etc" "$bb/tmp" "$bb/root" "$bb/home/sandbox"
chmod 1777 "$bb/tmp"
cp "$work/bbdeb/bin/busybox" "$bb/bin/busybox"
for applet in $("$bb/bin/busybox" --list); do
  [[ $applet == busybox ]] || ln -s busybox "$bb/bin/$applet"
done
printf 'root:x:0:0:root:/root:/bin/sh\nsandbox:x:1000:1000:sandbox:/home/sandbox:/bin/sh\nnobody:x:65534:65534:nobody:/:/bin/false\n' >"$bb/etc/passwd"
printf 'root:x:0:\nsandbox:x:1000:\nnogroup:x:65534:\n' >"$bb/etc/group"
oci_archive busybox localhost/localcluster/busybox:1.35 "$bb" '{"Env":["PATH=/bin"],"Cmd":["sh"]}'
log "busybox built in $(( $(date +%s) - t0 ))s"

# --- python3: debootstrap minbase + python3-minimal.
t0=$(date +%s)
py="$work/python3"
debootstrap --variant=minbase --include=python3,python3-fastapi,python3-uvicorn,python3-multipart "$suite" "$py" "$mirror" >"$work/debootstrap.log" 2>&1 ||
  { tail -n 20 "$work/debootstrap.log" >&2; die "debootstrap $suite from $mirror failed"; }
# Trim what a container never needs; keep dpkg's database (it documents the contents).
rm -rf "$py"/var/cache/apt/archives/*.deb "$py"/var/lib/apt/lists/* "$py"/usr/share/doc/* "$py"/usr/share/man/* \
  "$py"/usr/share/locale/* "$py"/usr/share/info/* "$py"/var/log/* "$py"/dev/*
# The rootfs must not carry the build machine's identity.
: >"$py/etc/hostname"
: >"$py/etc/resolv.conf"
chroot "$py" /usr/sbin/useradd --uid 1000 --create-home --shell /bin/sh sandbox 2>/dev/null ||
  echo 'sandbox:x:1000:1000::/home/sandbox:/bin/sh' >>"$py/etc/passwd"
ln -sf python3 "$py/usr/bin/python"
oci_archive python3 localhost/localcluster/python3:3.11 "$py" '{"Env":["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin","LANG=C.UTF-8"],"Cmd":["python3"]}'
log "python3 built in $(( $(date +%s) - t0 ))s"

# --- sandboxd and sandbox-router: built from the release's module source.
t0=$(date +%s)
mkdir -p "$work/bin"
ldflags="-s -w -X sigs.k8s.io/agent-sandbox/internal/version.gitVersion=$as_version"
for bin in sandboxd:./packages/sandboxd/cmd/sandboxd sandbox-router:./sandbox-router/cmd; do
  # The module cache is read-only and carries the release's go.sum:
  # -mod=mod resolves with it without writing anything there.
  (cd "$as_dir" && CGO_ENABLED=0 GOOS=linux GOARCH=amd64 GOFLAGS=-mod=mod go build -trimpath -ldflags "$ldflags" \
    -o "$work/bin/${bin%%:*}" "${bin#*:}") || die "building ${bin%%:*} $as_version from $as_dir failed"
done
pr="$work/python-runtime"
cp -a "$py" "$pr"
mkdir -p "$pr/app"
install -m 0644 "$as_dir/examples/python-runtime-sandbox/main.py" "$pr/app/main.py"
chown -R 1000:1000 "$pr/app"
oci_archive python-runtime "localhost/localcluster/python-runtime:$as_version" "$pr" \
  '{"Env":["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin","LANG=C.UTF-8"],"Cmd":["python3","-m","uvicorn","main:app","--host","0.0.0.0","--port","8888"],"User":"1000","WorkingDir":"/app","ExposedPorts":{"8888/tcp":{}}}'
rm -rf "$pr"
sd="$work/sandboxd"
cp -a "$py" "$sd"
install -m 0755 "$work/bin/sandboxd" "$sd/usr/local/bin/sandboxd"
mkdir -p "$sd/workspace" && chown 1000:1000 "$sd/workspace"
oci_archive sandboxd "localhost/localcluster/sandboxd:$as_version" "$sd" \
  '{"Env":["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin","LANG=C.UTF-8"],"Entrypoint":["/usr/local/bin/sandboxd"],"User":"1000","WorkingDir":"/workspace","ExposedPorts":{"8080/tcp":{},"9090/tcp":{}}}'
rt="$work/router"
mkdir -p "$rt/etc" "$rt/tmp"
chmod 1777 "$rt/tmp"
install -m 0755 "$work/bin/sandbox-router" "$rt/sandbox-router"
printf 'root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n' >"$rt/etc/passwd"
printf 'root:x:0:\nnonroot:x:65532:\n' >"$rt/etc/group"
oci_archive sandbox-router "localhost/localcluster/sandbox-router:$as_version" "$rt" \
  '{"Entrypoint":["/sandbox-router"],"User":"65532:65532","ExposedPorts":{"8080/tcp":{},"8081/tcp":{},"9090/tcp":{}}}'
log "python-runtime, sandboxd and sandbox-router $as_version built in $(( $(date +%s) - t0 ))s"

cat >"$out/README" <<EOF
Images for localcluster's real node, made by scripts/realnode-images.sh on $(date -u +%Y-%m-%dT%H:%M:%SZ)
from $mirror ($suite): busybox-static $busybox_version, python3 $python_version.
  pause.tar    localhost/localcluster/pause:3.10
  busybox.tar  localhost/localcluster/busybox:1.35
  python3.tar  localhost/localcluster/python3:3.11
  python-runtime.tar  localhost/localcluster/python-runtime:$as_version (examples/python-runtime-sandbox of $as_version)
  sandboxd.tar        localhost/localcluster/sandboxd:$as_version (sigs.k8s.io/agent-sandbox $as_version, $go_version)
  sandbox-router.tar  localhost/localcluster/sandbox-router:$as_version
EOF
touch "$out/.complete"
log "all images built in $(( $(date +%s) - t_all ))s"
echo "$out"
