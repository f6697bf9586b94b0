#!/usr/bin/env bash
# CI set-up for the sandbox's bwrap runner (tests/sandbox/factory_bwrap.py): bubblewrap from
# apt when missing, then a probe with the namespaces the runner unshares. Idempotent: a machine
# that has a working bwrap is left alone (one probe, well under a second). Needs nothing cached.
# Exits non-zero, saying why, when bwrap cannot be installed or cannot create a sandbox here.
set -Eeuo pipefail

if command -v bwrap > /dev/null 2>&1; then
    echo "bwrap: already installed ($(bwrap --version))"
else
    sudo_cmd=()
    [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
    echo "bwrap: installing bubblewrap with apt-get"
    "${sudo_cmd[@]}" apt-get update -qq
    DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" \
        apt-get install -y -qq --no-install-recommends bubblewrap > /dev/null
    echo "bwrap: installed ($(bwrap --version))"
fi

# The runner's own flags, on a read-only view of the host: user namespaces must be allowed.
if ! probe=$(bwrap --unshare-all --unshare-user --die-with-parent --new-session \
        --cap-drop ALL --ro-bind / / --proc /proc --dev /dev true 2>&1); then
    echo "bwrap: cannot create a sandbox here: $probe" >&2
    echo "bwrap: user namespaces must be allowed (sysctl user.max_user_namespaces > 0)" >&2
    exit 1
fi
echo "bwrap: sandbox probe ok"
