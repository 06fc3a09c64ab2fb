// Package wsraw opens websockets by hand (RFC 6455 §4.1) for load and
// fan-out benchmarks whose clients read raw frames instead of decoding
// every message: the upgrade request, then the 101 answer, then the frames
// on the same buffered reader.
package wsraw

import (
	"bufio"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"net"
	"net/http"
	"net/url"
)

// Upgrade sends the upgrade request for u on c, with extra header lines
// (each ending in "\r\n"; "" for none), and reads the answer through a
// reader of bufSize bytes. Anything but 101 Switching Protocols is an
// error; on an error c is closed.
func Upgrade(c net.Conn, u *url.URL, extra string, bufSize int) (*bufio.Reader, *http.Response, error) {
	var key [16]byte
	rand.Read(key[:])
	fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: %s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\n%s\r\n",
		u.RequestURI(), u.Host, base64.StdEncoding.EncodeToString(key[:]), extra)
	br := bufio.NewReaderSize(c, bufSize)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		c.Close()
		return nil, nil, err
	}
	if resp.StatusCode != http.StatusSwitchingProtocols {
		c.Close()
		return nil, nil, fmt.Errorf("upgrade: %s", resp.Status)
	}
	return br, resp, nil
}
