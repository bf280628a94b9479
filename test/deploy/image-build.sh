#!/usr/bin/env bash
# Builds helm/vieneu-tts/Dockerfile's default target (the CPU runtime) with
# podman and runs the image: it must start as user 10001 under tini, answer
# /healthz and /readyz, speak Vietnamese through POST /api/v1/audio/speech,
# and exit 0 on SIGTERM (`podman stop`).
#
#   bash test/deploy/image-build.sh            (root; installs podman and debootstrap from Debian if absent)
#
# The base image, node:$NODE_VERSION-bookworm-slim, comes from Docker Hub.
# Where the registry cannot be reached (this project's build machines reach
# Debian and npm, not Docker Hub), a stand-in with the same name is made
# once and cached: Debian bookworm (debootstrap, minbase) with node
# v$NODE_VERSION in /usr/local/bin and its headers in /usr/local/include/node
# (this machine's node when it is that version, else the official build
# from the npm registry's node-linux-<arch> package), this machine's npm in
# /usr/local/lib/node_modules, where the official image has them (plus
# npm_config_nodedir, so that a
# native module whose prebuilt binary is on GitHub compiles against those
# headers rather than downloading them) and this machine's certificate
# authorities (NODE_EXTRA_CA_CERTS: its way out may be a TLS-inspecting
# proxy). Every step of the Dockerfile then runs as written (apt-get,
# npm ci, tsc, vite); the stand-in's two variables stay in the image.
#
# Cache: $IMAGE_CACHE_DIR (default ~/.cache/vieneu-tts/image). Prints what it
# checks; exits 1 at the first check that fails.
set -euo pipefail
cd "$(dirname "$0")/../.."

CACHE="${IMAGE_CACHE_DIR:-$HOME/.cache/vieneu-tts/image}"
DOCKERFILE=helm/vieneu-tts/Dockerfile
NODE_VERSION=$(sed -n 's/^ARG NODE_VERSION=//p' "$DOCKERFILE")
BASE="node:${NODE_VERSION}-bookworm-slim"
TAG="localhost/vieneu-tts:check"
NAME="vieneu-image-check-$$"
PORT="${IMAGE_CHECK_PORT:-18980}"
OPS_PORT=$((PORT + 1))
mkdir -p "$CACHE"

say() { echo "image: $*"; }
fail() { echo "image: FAILED: $*" >&2; exit 1; }

if ! command -v podman >/dev/null 2>&1 || ! command -v debootstrap >/dev/null 2>&1 || ! command -v runc >/dev/null 2>&1; then
  say "installing podman and debootstrap from Debian"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends podman buildah debootstrap fuse-overlayfs runc uidmap >/dev/null
fi

stand_in() {
  local tarball="$CACHE/base-node-${NODE_VERSION}-bookworm.tar"
  if [ ! -f "$tarball" ]; then
    local root node_bin node_headers
    root=$(mktemp -d)
    if [ "$(node --version)" = "v${NODE_VERSION}" ]; then
      node_bin=$(readlink -f "$(command -v node)")
      node_headers=/usr/include/node
    else
      # The official Linux build of that release, as the npm registry publishes it (bin/node, include/node).
      local arch pkg
      case "$(uname -m)" in x86_64) arch=x64 ;; aarch64) arch=arm64 ;; *) fail "no node-linux package for $(uname -m)" ;; esac
      pkg="$CACHE/node-linux-${arch}-${NODE_VERSION}"
      if [ ! -x "$pkg/bin/node" ]; then
        (cd "$CACHE" && npm pack -q "node-linux-${arch}@${NODE_VERSION}" >/dev/null 2>&1) || fail "this machine's node is $(node --version), and node-linux-${arch}@${NODE_VERSION} cannot be had from the npm registry"
        mkdir -p "$pkg" && tar -xzf "$CACHE/node-linux-${arch}-${NODE_VERSION}.tgz" -C "$pkg" --strip-components=1 && rm -f "$CACHE/node-linux-${arch}-${NODE_VERSION}.tgz"
      fi
      [ "$("$pkg/bin/node" --version)" = "v${NODE_VERSION}" ] || fail "node-linux-${arch}@${NODE_VERSION} is not node v${NODE_VERSION}"
      node_bin="$pkg/bin/node"
      node_headers="$pkg/include/node"
    fi
    say "making a stand-in for $BASE: debootstrap bookworm (minbase) + node v${NODE_VERSION}"
    debootstrap --variant=minbase bookworm "$root" http://deb.debian.org/debian >"$CACHE/debootstrap.log" 2>&1 || fail "debootstrap (log: $CACHE/debootstrap.log)"
    install -m 0755 "$node_bin" "$root/usr/local/bin/node"
    local npm_dir
    npm_dir=$(dirname "$(dirname "$(readlink -f "$(command -v npm)")")")
    mkdir -p "$root/usr/local/lib/node_modules"
    cp -a "$npm_dir" "$root/usr/local/lib/node_modules/npm"
    ln -sf ../lib/node_modules/npm/bin/npm-cli.js "$root/usr/local/bin/npm"
    ln -sf ../lib/node_modules/npm/bin/npx-cli.js "$root/usr/local/bin/npx"
    # The official image has node's headers here too; native modules without a reachable prebuilt binary compile against them.
    [ -d "$node_headers" ] && mkdir -p "$root/usr/local/include" && cp -a "$node_headers" "$root/usr/local/include/node"
    # This machine's certificate authorities: its egress to the registries may be TLS-inspected by a proxy it trusts.
    mkdir -p "$root/etc/ssl/certs" && cp /etc/ssl/certs/ca-certificates.crt "$root/etc/ssl/certs/build-host-ca.crt"
    rm -rf "$root/var/cache/apt/archives/"*.deb "$root/var/lib/apt/lists/"*
    tar -C "$root" -cf "$tarball.part" . && mv "$tarball.part" "$tarball"
    rm -rf "$root"
  fi
  # npm_config_nodedir: node-gyp uses those headers instead of downloading them from nodejs.org, which cannot be reached here.
  podman import --change 'CMD ["node"]' --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change 'ENV npm_config_nodedir=/usr/local' --change 'ENV NODE_EXTRA_CA_CERTS=/etc/ssl/certs/build-host-ca.crt' \
    "$tarball" "docker.io/library/$BASE" >/dev/null 2>&1
  say "base: stand-in for $BASE (Debian bookworm minbase + node v${NODE_VERSION}; Docker Hub not reachable)"
}

if podman image exists "docker.io/library/$BASE"; then
  say "base: $BASE (already present)"
elif timeout 60 podman pull -q "docker.io/library/$BASE" >/dev/null 2>&1; then
  say "base: $BASE (pulled)"
else
  stand_in
fi

say "building $DOCKERFILE (target runtime)"
started=$(date +%s)
podman build --pull=never --network host --isolation chroot --target runtime -f "$DOCKERFILE" -t "$TAG" . >"$CACHE/build.log" 2>&1 \
  || { tail -30 "$CACHE/build.log" >&2; fail "podman build (log: $CACHE/build.log)"; }
say "built in $(( $(date +%s) - started )) s, $(podman image inspect "$TAG" --format '{{.Size}}' | awk '{printf "%.0f MB", $1/1e6}')"

# How this kind of machine (a VM with hybrid cgroups and a process-count limit) runs a container: runc with
# cgroupfs (crun refuses hybrid cgroups), limits below the machine's own, and host networking (no bridge rules).
RUNTIME=(--runtime runc --cgroup-manager cgroupfs)
cleanup() { podman "${RUNTIME[@]}" rm -f "$NAME" >/dev/null 2>&1 || true; }
trap cleanup EXIT
podman "${RUNTIME[@]}" run -d --name "$NAME" --network host --ulimit nofile=20000:20000 --ulimit nproc=4096:4096 -e PORT="$PORT" -e OPS_PORT="$OPS_PORT" -e HOST=127.0.0.1 \
  -e ADMIN_TOKEN=image-check-admin-token-0123456789 "$TAG" >/dev/null
for _ in $(seq 1 60); do
  curl -fsS "http://127.0.0.1:$OPS_PORT/readyz" >/dev/null 2>&1 && break
  sleep 1
done
curl -fsS "http://127.0.0.1:$OPS_PORT/readyz" >/dev/null || { podman "${RUNTIME[@]}" logs "$NAME" | tail -20 >&2; fail "not ready in 60 s"; }
curl -fsS "http://127.0.0.1:$OPS_PORT/healthz" >/dev/null || fail "/healthz"
say "/healthz and /readyz answer"

user=$(podman "${RUNTIME[@]}" top "$NAME" user,args | awk 'NR>1')
echo "$user" | grep -q '/usr/bin/tini -- node dist/core/main.js' || fail "PID 1 is not tini running node: $user"
[ "$(podman "${RUNTIME[@]}" exec "$NAME" id -u)" = 10001 ] || fail "not running as user 10001"
podman "${RUNTIME[@]}" exec "$NAME" sh -c 'test ! -d node_modules/typescript && test ! -d node_modules/ava' || fail "dev dependencies in the image"
podman "${RUNTIME[@]}" exec "$NAME" espeak-ng --version >/dev/null || fail "espeak-ng missing"
runtime=$(podman "${RUNTIME[@]}" exec "$NAME" node --version)
[ "$runtime" = "v${NODE_VERSION}" ] || fail "the image runs node $runtime, not v${NODE_VERSION}"
# oidc-provider names the Node.js releases it supports at import, on stderr.
! podman "${RUNTIME[@]}" logs "$NAME" 2>&1 | grep -q 'Unsupported runtime' || fail "a dependency says the runtime is unsupported: $(podman "${RUNTIME[@]}" logs "$NAME" 2>&1 | grep 'Unsupported runtime')"
say "runs node $runtime as user 10001 under tini; no dev dependencies; espeak-ng present; no dependency calls the runtime unsupported"

# A key from the admin API, then real speech.
account=$(curl -fsS -X POST "http://127.0.0.1:$PORT/admin/v1/bootstrap" -H 'authorization: Bearer image-check-admin-token-0123456789' \
  -H 'content-type: application/json' -d '{"name":"image check","grant":{"totalTokens":100000}}')
key=$(node -e 'console.log(JSON.parse(process.argv[1]).apiKey ?? "")' "$account")
[ -n "$key" ] || fail "no API key in $account"
bytes=$(curl -fsS -X POST "http://127.0.0.1:$PORT/api/v1/audio/speech" -H "authorization: Bearer $key" -H 'content-type: application/json' \
  -d '{"input":"Xin chào, đây là giọng đọc từ ảnh chạy thật.","response_format":"wav"}' | wc -c)
[ "$bytes" -gt 10000 ] || fail "speech answered $bytes bytes"
say "POST /api/v1/audio/speech: $bytes bytes of WAV"
# Streamed speech, to its end: on Node 22 and 24 a response written while corked answered false and never emitted
# 'drain', so every stream stopped after its first frame (plugins/speech/sink.ts); the suite runs on this machine's Node.
stream=$(mktemp)
curl -sS -m 60 -X POST "http://127.0.0.1:$PORT/api/v1/tts/stream" -H "authorization: Bearer $key" -H 'content-type: application/json' \
  -d '{"text":"Xin chào, đây là giọng đọc từ ảnh chạy thật, phát trực tiếp từng đoạn một."}' -o "$stream" \
  || fail "POST /api/v1/tts/stream did not finish: $(wc -c <"$stream") bytes in 60 s"
[ "$(tail -c 4 "$stream" | od -An -tx1 | tr -d ' \n')" = 00000000 ] || fail "POST /api/v1/tts/stream ended without its terminator"
say "POST /api/v1/tts/stream: $(wc -c <"$stream") bytes of frames, then the terminator"
rm -f "$stream"

started=$(date +%s%N)
podman "${RUNTIME[@]}" stop -t 30 "$NAME" >/dev/null
code=$(podman "${RUNTIME[@]}" inspect "$NAME" --format '{{.State.ExitCode}}')
[ "$code" = 0 ] || { podman "${RUNTIME[@]}" logs "$NAME" | tail -20 >&2; fail "exit code $code after SIGTERM"; }
say "SIGTERM: exit 0 in $(( ($(date +%s%N) - started) / 1000000 )) ms"
say "ok"
