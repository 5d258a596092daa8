#!/usr/bin/env bash
# Install the system tools sira-seek's local nodes need (Maven, a JDK), only if missing;
# with --browser also Chromium, which the test suite uses to check the HTML report.
# Idempotent and quick when everything is there; uses apt-get when run as root.
set -euo pipefail

need=()
if [ "${1:-}" = "--browser" ]; then
  # the report test opens the HTML report in a real headless browser
  command -v chromium >/dev/null 2>&1 || need+=(chromium)
fi
command -v mvn >/dev/null 2>&1 || need+=(maven)
command -v java >/dev/null 2>&1 || need+=(openjdk-17-jre-headless)
command -v python3 >/dev/null 2>&1 || need+=(python3 python3-venv)

if [ ${#need[@]} -eq 0 ]; then
  exit 0
fi
if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null 2>&1; then
  echo "sira-seek needs: ${need[*]} (install them, or point sira-seek at a cluster with --url)" >&2
  exit 1
fi
echo "installing ${need[*]} with apt-get ..." >&2
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
