#!/bin/sh
# Installs Debian's chromium for the dashboard's browser test (tests/dashboard/
# test_dashboard_browser.py) when /usr/bin/chromium is missing. Playwright drives it
# through executable_path; no browser is ever downloaded by Playwright itself.
set -eu
if [ -x /usr/bin/chromium ]; then
    echo "chromium: already installed ($(/usr/bin/chromium --version 2>/dev/null || echo unknown version))"
    exit 0
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
    SUDO="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update
$SUDO apt-get install -y --no-install-recommends chromium
/usr/bin/chromium --version
