#!/usr/bin/env bash
# Re-creates static/vendor from the npm registry: one dist file per library,
# no bundler. Records name, version and sha256 in static/vendor/VERSIONS.
set -euo pipefail
cd "$(dirname "$0")/.."
CHARTJS_VERSION=4.6.1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && npm pack --silent "chart.js@$CHARTJS_VERSION" >/dev/null && tar xzf chart.js-$CHARTJS_VERSION.tgz)
cp "$tmp/package/dist/chart.umd.min.js" static/vendor/chart.umd.min.js
cp "$tmp/package/LICENSE.md" static/vendor/chart.js.LICENSE.md
sum=$(sha256sum static/vendor/chart.umd.min.js | cut -d' ' -f1)
printf 'chart.js %s dist/chart.umd.min.js sha256:%s (MIT)\n' "$CHARTJS_VERSION" "$sum" > static/vendor/VERSIONS
cat static/vendor/VERSIONS
