#!/usr/bin/env bash
# Optional system packages for the browser and real-ncu tests (skipped when absent).
set -euo pipefail
need=()
command -v chromium >/dev/null 2>&1 || need+=(chromium)
[ ${#need[@]} -eq 0 ] && exit 0
export DEBIAN_FRONTEND=noninteractive
timeout 600 apt-get update -qq
timeout 900 apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
