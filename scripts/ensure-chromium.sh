#!/bin/sh
# The browser tests drive Debian's Chromium (Playwright's own browser download cannot run here).
# Install it when it is missing: as root with apt-get, or say what to do.
set -eu
CHROMIUM="${CHROMIUM_PATH:-/usr/bin/chromium}"
if [ -x "$CHROMIUM" ]; then
	exit 0
fi
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
	echo "Installing Debian's chromium for the browser tests (apt-get install chromium)"
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
	[ -x "$CHROMIUM" ] && exit 0
fi
echo "The browser tests need Chromium at $CHROMIUM." >&2
echo "On Debian or Ubuntu: sudo apt-get install chromium (or set CHROMIUM_PATH to a Chromium binary)." >&2
exit 1
