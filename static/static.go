// Package static holds the browser assets (CSS, our JS as native ES
// modules, images) embedded into the binary, so the app works with no
// network. Charts are our own SVG (js/charts.js): no third-party browser
// code is served.
package static

import "embed"

// FS is the embedded asset tree: css/, js/, img/.
//
//go:embed css js img
var FS embed.FS
