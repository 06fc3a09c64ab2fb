// Package static holds the browser assets (CSS, our JS, images, vendored chart
// libraries) embedded into the binary, so the app works with no network.
package static

import "embed"

// FS is the embedded asset tree: css/, js/, vendor/.
//
//go:embed css js vendor img
var FS embed.FS
