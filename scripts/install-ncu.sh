#!/usr/bin/env bash
# Install the Nsight Compute CLI (`ncu`) from Debian's non-free component, without a GPU.
# Used by CI for the `ncu`-marked tests (ncu --import and the "no CUDA driver" diagnosis).
# Debian 12 (bookworm) ships nsight-compute 2022.3; it needs the non-free component enabled.
set -euo pipefail

if command -v ncu >/dev/null 2>&1; then
    echo "ncu already installed: $(command -v ncu)"
    exit 0
fi
SUDO=""
if [ "$(id -u)" != "0" ]; then SUDO="sudo"; fi
. /etc/os-release
SUITE="${VERSION_CODENAME:-bookworm}"
LIST=/etc/apt/sources.list.d/ncu-roof-non-free.sources
if ! apt-cache policy nsight-compute 2>/dev/null | grep -q Candidate; then
    $SUDO tee "$LIST" >/dev/null <<SOURCES
Types: deb
URIs: http://deb.debian.org/debian
Suites: ${SUITE}
Components: non-free
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SOURCES
fi
$SUDO apt-get update -q
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends nsight-compute
ncu --version
