# knightcode in a container: the whole agent (tools, `!` commands, plugins) behind one boundary.
# See docs/containerization.md for how this compares with the sandbox backends.
#
# Build (from the repository root):
#     docker build -t knightcode .
#     podman build -t knightcode .            # the same, where no Docker daemon runs
#     docker build --build-arg BASE=my/python:3.11 -t knightcode .   # another Debian-like base
#
# Run it from the working folder it may change:
#     docker run --rm -it \
#       -e ANTHROPIC_API_KEY \
#       -v "$PWD:/workspace" \
#       -v knightcode-agent-home:/root/.knightcode/agent \
#       knightcode
#
# Pass only the credentials your provider needs (-e NAME copies one variable from your shell).
# The named volume `knightcode-agent-home` keeps the container's own settings, credentials and
# sessions between runs; do not mount your host ~/.knightcode/agent unless the container may see
# your host configuration and keys. Check the boundary from inside knightcode with
#     !pwd
# which must print /workspace: only that folder writes through to the host.
#
# BASE must be Debian-based with python3 (>= 3.11) and its venv module; apt installs git,
# ripgrep and CA certificates when the base lacks them (python:3.11-slim does).
ARG BASE=python:3.11-slim
FROM ${BASE}

RUN missing=""; \
    for package in ca-certificates git ripgrep; do \
        dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q 'install ok installed' \
            || missing="$missing $package"; \
    done; \
    if [ -n "$missing" ]; then \
        apt-get update \
        && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $missing \
        && rm -rf /var/lib/apt/lists/*; \
    fi

# knightcode from this checkout, in its own venv so the base's Python packages stay untouched
# (Debian's python3 refuses pip installs into the system, PEP 668). To install a wheel instead,
# build it into dist/ (python -m build --wheel) and pass
#     --build-arg PACKAGE=/tmp/knightcode-src/dist/knightcode-<version>-py3-none-any.whl
ARG PACKAGE=/tmp/knightcode-src
COPY . /tmp/knightcode-src
RUN python3 -m venv /opt/knightcode \
    && /opt/knightcode/bin/pip install --no-cache-dir --disable-pip-version-check "$PACKAGE" \
    && rm -rf /tmp/knightcode-src

ENV PATH=/opt/knightcode/bin:$PATH
WORKDIR /workspace
ENTRYPOINT ["knightcode"]
