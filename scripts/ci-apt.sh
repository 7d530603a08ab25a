#!/usr/bin/env bash
# Optional system tools for the browser and real-ncu tests; those tests skip when these are absent.
set -uo pipefail
cd "$(dirname "$0")"
timeout 900 bash install-ncu.sh || echo "ci-apt: nsight-compute not installed"
if ! command -v chromium >/dev/null 2>&1; then
    export DEBIAN_FRONTEND=noninteractive
    timeout 600 apt-get update -qq || true
    timeout 900 apt-get install -y -qq --no-install-recommends chromium >/dev/null \
        || echo "ci-apt: chromium not installed"
fi
