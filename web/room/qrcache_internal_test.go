package room

// qrcache_internal_test.go: the join QR codes drawn lately are kept and
// served again.

import (
	"fmt"
	"testing"
)

// TestQRCacheKeepsTheLatest: the join QR codes drawn lately are served
// again without drawing (a class's screens ask for the same one); the
// oldest goes first past qrCacheSize.
func TestQRCacheKeepsTheLatest(t *testing.T) {
	var q qrCache
	for i := range qrCacheSize + 1 {
		q.Put(fmt.Sprint("link", i), []byte{byte(i)})
	}
	cases := []struct {
		link string
		want bool
	}{
		{"link0", false}, // the oldest, gone
		{"link1", true},
		{fmt.Sprint("link", qrCacheSize), true},
		{"never", false},
	}
	for _, c := range cases {
		if got := q.Get(c.link) != nil; got != c.want {
			t.Errorf("%s kept: %v, want %v", c.link, got, c.want)
		}
	}
	if len(q.svgs) != qrCacheSize || len(q.order) != qrCacheSize {
		t.Errorf("%d kept (%d in order), want %d", len(q.svgs), len(q.order), qrCacheSize)
	}
}
