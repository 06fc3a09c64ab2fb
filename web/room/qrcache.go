package room

// qrcache.go: the join QR codes a server drew lately, kept for the class's
// screens that ask for the same one.

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
)

// qrCache keeps the QR codes drawn lately, by link (at most qrCacheSize;
// the oldest goes first).
type qrCache struct {
	mu    sync.Mutex
	svgs  map[string][]byte
	order []string
}

const qrCacheSize = 64

func (q *qrCache) Get(link string) []byte {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.svgs[link]
}

func (q *qrCache) Put(link string, svg []byte) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.svgs == nil {
		q.svgs = map[string][]byte{}
	}
	if _, ok := q.svgs[link]; ok {
		return
	}
	if len(q.order) >= qrCacheSize {
		delete(q.svgs, q.order[0])
		q.order = q.order[1:]
	}
	q.svgs[link] = svg
	q.order = append(q.order, link)
}

// QRSVG draws a QR bitmap (quiet zone included) as one SVG path.
func QRSVG(bm [][]bool, title string) []byte {
	n := len(bm)
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %d %d" shape-rendering="crispEdges" role="img"><title>%s</title><rect width="%d" height="%d" fill="#fff"/><path fill="#000" d="`, n, n, escapeXML(title), n, n)
	for y, row := range bm {
		for x, on := range row {
			if on {
				fmt.Fprintf(&b, "M%d %dh1v1h-1z", x, y)
			}
		}
	}
	b.WriteString(`"/></svg>`)
	return []byte(b.String())
}

func escapeXML(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;").Replace(s)
}

// CrossSite reports whether a request comes from another site's page: the
// browser says so (Sec-Fetch-Site), or it carries another origin.
func CrossSite(r *http.Request) bool {
	if r.Header.Get("Sec-Fetch-Site") == "cross-site" {
		return true
	}
	if o := r.Header.Get("Origin"); o != "" && o != "null" {
		if u, err := url.Parse(o); err == nil && !strings.EqualFold(u.Host, r.Host) {
			return true
		}
	}
	return false
}
