package room

// fanout_deflate.go: followers' frames compressed once per replica. A
// follower whose browser offers permessage-deflate (RFC 7692; gorilla
// negotiates it without context takeover, so every message is compressed
// on its own) gets a large message as a compressed frame that the view
// prepares once for all of them, as it prepares the plain frame: a stored
// (uncompressed) deflate block for the message's own envelope, the shared
// payload compressed once and sync-flushed, then a stored block for the
// closing brace and the start of the empty block the receiver completes.

import (
	"bytes"
	"compress/flate"
	"net/http"
	"strings"
	"sync"
)

var deflaters = sync.Pool{New: func() any {
	w, _ := flate.NewWriter(nil, flate.BestSpeed)
	return w
}}

// deflateShared compresses a payload as the middle of a message: a
// sequence of deflate blocks ending on a byte boundary, none of them final
// (a sync flush), with no reference to anything before it.
func deflateShared(p []byte) []byte {
	var b bytes.Buffer
	b.Grow(len(p)/3 + 64)
	w := deflaters.Get().(*flate.Writer)
	w.Reset(&b)
	w.Write(p)
	w.Flush()
	deflaters.Put(w)
	return b.Bytes()
}

// appendStored appends data (at most 65535 bytes) as one stored deflate
// block that is not the last, starting on a byte boundary.
func appendStored(b, data []byte) []byte {
	n := len(data)
	b = append(b, 0x00, byte(n), byte(n>>8), ^byte(n), ^byte(n>>8))
	return append(b, data...)
}

// deflateEnd is the message's closing brace as a stored block, then the
// first byte of an empty stored block: the receiver appends its other four
// bytes (00 00 ff ff) before inflating (RFC 7692 §7.2.2).
var deflateEnd = append(appendStored(nil, closeBrace), 0x00)

// offersDeflate says whether a websocket request offers permessage-deflate
// in a Sec-WebSocket-Extensions header that gorilla's parser reads whole:
// then gorilla's Upgrader (EnableCompression) has negotiated it. It reads
// only plain tokens and token=token parameters, so a header it accepts is
// one gorilla reads the same way; for anything else it says no, and the
// follower gets plain frames (which are valid either way). An offer that
// limits the server's window (server_max_window_bits) gets plain frames too.
func offersDeflate(h http.Header) bool {
	found := false
	for _, v := range h.Values("Sec-WebSocket-Extensions") {
		for _, ext := range strings.Split(v, ",") {
			parts := strings.Split(ext, ";")
			for i, p := range parts {
				p = strings.Trim(p, " \t")
				name, val, hasVal := strings.Cut(p, "=")
				if !isToken(name) || hasVal && (i == 0 || !isToken(val)) {
					return false
				}
				if i == 0 && name == "permessage-deflate" {
					found = true
				}
				if i > 0 && name == "server_max_window_bits" {
					return false // a smaller window than deflateShared's: plain frames
				}
			}
		}
	}
	return found
}

func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0) {
			return false
		}
	}
	return true
}
