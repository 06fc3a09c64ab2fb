#!/usr/bin/env bash
# Re-creates the vendored JavaScript from the npm registry: one dist file per
# library, no bundler, name, version and sha256 recorded in a VERSIONS file.
# The app serves no third-party browser code (charts are static/js/charts.js);
# the only vendored library is axe-core, which the browser tests inject to
# check pages for accessibility (internal/browsertest/testdata).
set -euo pipefail
cd "$(dirname "$0")/.."
AXE_VERSION=4.14.1
out=internal/browsertest/testdata
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && npm pack --silent "axe-core@$AXE_VERSION" >/dev/null && tar xzf axe-core-$AXE_VERSION.tgz)
cp "$tmp/package/axe.min.js" "$out/axe.min.js"
cp "$tmp/package/LICENSE" "$out/axe.LICENSE"
sum=$(sha256sum "$out/axe.min.js" | cut -d' ' -f1)
printf 'axe-core %s axe.min.js sha256:%s (MPL-2.0)\n' "$AXE_VERSION" "$sum" > "$out/VERSIONS"
cat "$out/VERSIONS"
