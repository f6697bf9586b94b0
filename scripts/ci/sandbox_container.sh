#!/usr/bin/env bash
# CI set-up for the sandbox `container` backend (builtin:gondolin) and the repo's Dockerfile:
#
# 1. podman + runc + uidmap from Debian (there is no Docker engine here; podman speaks the same
#    CLI). crun refuses a hybrid cgroup layout, and a container may not raise its rlimits
#    without CAP_SYS_RESOURCE, so the tests run podman with `--runtime runc` and lowered ulimits
#    (settings sandbox.container.runtime/ulimits, as a user would set them).
# 2. localhost/knightcode-test-busybox:1, the image the runner tests use: no registry image is
#    reachable, so it is a `podman import` of a rootfs made from Debian's busybox-static (every
#    applet symlinked, /bin/sh, /tmp).
# 3. localhost/knightcode-base:bookworm, the base the Dockerfile test builds FROM
#    (`--build-arg BASE=…` instead of python:3.11-slim, which cannot be pulled here): a minimal
#    Debian rootfs with python3, python3-venv, git and ripgrep, made by mmdebstrap from the
#    Debian mirror and imported (about 40 s).
#
# Idempotent and quick when done: each image is built only when `podman image exists` says it is
# missing. Nothing is written inside the repository; scratch files go to a temporary folder.
set -Eeuo pipefail

BUSYBOX_IMAGE=localhost/knightcode-test-busybox:1
BASE_IMAGE=localhost/knightcode-base:bookworm
PODMAN=(podman --runtime runc)

say() { printf 'sandbox_container: %s\n' "$*"; }
now_ms() { echo $(($(date +%s%N) / 1000000)); }
took() { printf '%d.%d s' $((($(now_ms) - $1) / 1000)) $(((($(now_ms) - $1) % 1000) / 100)); }

apt_install() {
    local missing=()
    for pkg in "$@"; do
        dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed' \
            || missing+=("$pkg")
    done
    if ((${#missing[@]})); then
        say "apt-get install ${missing[*]}"
        export DEBIAN_FRONTEND=noninteractive
        apt-get update -qq
        apt-get install -y -qq --no-install-recommends "${missing[@]}" > /dev/null
    fi
}

build_busybox_image() {
    local work started
    started=$(now_ms)
    work=$(mktemp -d)
    trap 'rm -rf "$work"' RETURN
    local root="$work/root"
    mkdir -p "$root"/{bin,etc,root,tmp,proc,sys,dev,workspace,usr}
    chmod 1777 "$root/tmp"
    cp /bin/busybox "$root/bin/busybox"
    for applet in $(/bin/busybox --list); do
        [ -e "$root/bin/$applet" ] || ln -s busybox "$root/bin/$applet"
    done
    ln -s ../bin "$root/usr/bin"
    ln -s bin "$root/sbin"
    ln -s ../bin "$root/usr/sbin"
    printf 'root:x:0:0:root:/root:/bin/sh\n' > "$root/etc/passwd"
    printf 'root:x:0:\n' > "$root/etc/group"
    tar -C "$root" -cf "$work/rootfs.tar" .
    "${PODMAN[@]}" import -q --change 'CMD ["/bin/sh"]' \
        --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
        "$work/rootfs.tar" "$BUSYBOX_IMAGE" > /dev/null
    say "built $BUSYBOX_IMAGE in $(took "$started")"
}

# A stand-in for python:3.11-slim: Debian bookworm's python3 (3.11) with venv, plus what the
# Dockerfile would otherwise apt-get (git, ripgrep, CA certificates). The machine's own extra CA
# certificates (/usr/local/share/ca-certificates, e.g. a TLS-inspecting egress proxy) are copied
# in, so pip inside the build trusts what pip on the host trusts.
build_base_image() {
    local work started
    started=$(now_ms)
    work=$(mktemp -d)
    trap 'rm -rf "$work"' RETURN
    mmdebstrap --quiet --variant=essential \
        --include=python3,python3-venv,ca-certificates,git,ripgrep,bash \
        --dpkgopt='path-exclude=/usr/share/man/*' \
        --dpkgopt='path-exclude=/usr/share/doc/*' \
        --dpkgopt='path-exclude=/usr/share/locale/*' \
        --customize-hook='for c in /usr/local/share/ca-certificates/*.crt; do
            [ -e "$c" ] && cp "$c" "$1/usr/local/share/ca-certificates/"; done
            chroot "$1" update-ca-certificates > /dev/null 2>&1' \
        bookworm "$work/base.tar" \
        "deb http://deb.debian.org/debian bookworm main" \
        "deb http://deb.debian.org/debian-security bookworm-security main"
    "${PODMAN[@]}" import -q --change 'CMD ["/bin/bash"]' \
        --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
        "$work/base.tar" "$BASE_IMAGE" > /dev/null
    say "built $BASE_IMAGE in $(took "$started")"
}

apt_install podman runc uidmap busybox-static mmdebstrap

if "${PODMAN[@]}" image exists "$BUSYBOX_IMAGE"; then
    say "$BUSYBOX_IMAGE present"
else
    build_busybox_image
fi

if "${PODMAN[@]}" image exists "$BASE_IMAGE"; then
    say "$BASE_IMAGE present"
else
    build_base_image
fi
