package web_test

// classvisitors_test.go: a class behind one address (a school's NAT) is
// served — each browser is its own visitor by the cookie the server sets
// on a page load — while one browser, and one address, stay capped.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/inferscope/inferscope/web"
	"github.com/inferscope/inferscope/web/wire"
	"github.com/inferscope/inferscope/web/ws"
)

// browser is one student's browser: its own cookie jar, which gets the
// visitor cookie when it loads a page.
type browser struct {
	base string
	jar  http.CookieJar
	hc   *http.Client
}

func newBrowser(t testing.TB, base string) *browser {
	jar, _ := cookiejar.New(nil)
	return &browser{base: base, jar: jar, hc: &http.Client{Jar: jar, Timeout: 10 * time.Second}}
}

func (b *browser) load(path string) error {
	resp, err := b.hc.Get(b.base + path)
	if err != nil {
		return err
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		return fmt.Errorf("GET %s: %s", path, resp.Status)
	}
	return nil
}

// session opens a lab websocket with the browser's cookies; it returns the
// first message's type and code (welcome, or an error's code).
func (b *browser) session() (*websocket.Conn, string, error) {
	d := websocket.Dialer{Jar: b.jar, HandshakeTimeout: 10 * time.Second}
	c, _, err := d.Dial("ws"+strings.TrimPrefix(b.base, "http")+"/ws", nil)
	if err != nil {
		return nil, "", err
	}
	var m struct {
		Type    string
		Payload struct{ Code string }
	}
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	if err := c.ReadJSON(&m); err != nil {
		c.Close()
		return nil, "", err
	}
	if m.Type != wire.MsgWelcome {
		c.Close()
		return nil, m.Payload.Code, nil
	}
	return c, "welcome", nil
}

// generate runs n tokens to the end on c and reports how many it made.
func generate(c *websocket.Conn, n int) (int, error) {
	start := map[string]any{"type": "start", "id": 1, "payload": map[string]any{"prompt": "The", "max_new_tokens": n, "stop_at_eos": false,
		"sampling": map[string]any{"temperature": 0.8, "seed": 1}}}
	if err := c.WriteJSON(start); err != nil {
		return 0, err
	}
	if err := c.WriteJSON(map[string]any{"type": "run", "id": 2}); err != nil {
		return 0, err
	}
	for {
		c.SetReadDeadline(time.Now().Add(60 * time.Second))
		var m struct {
			Type    string
			Payload json.RawMessage
		}
		if err := c.ReadJSON(&m); err != nil {
			return 0, err
		}
		if m.Type == wire.MsgError {
			return 0, fmt.Errorf("error %s", m.Payload)
		}
		if m.Type != wire.MsgEvent {
			continue
		}
		var ev struct {
			Stage string
			Stop  *struct{ Generated int }
		}
		json.Unmarshal(m.Payload, &ev)
		if ev.Stage == "stop" && ev.Stop != nil {
			return ev.Stop.Generated, nil
		}
	}
}

// serveReal runs the server through Serve (the per-address connection cap
// included) on a loopback port.
func serveReal(t testing.TB, lim ws.Limits) string {
	t.Helper()
	cat, _ := defaultCatalog(t)
	srv, err := web.New(web.Options{Catalog: cat, Limits: lim})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Shutdown(context.Background()) })
	return "http://" + ln.Addr().String()
}

// TestClassBehindOneAddress: 30 students at one address, each a browser
// with its own cookie jar loading /lab first, each holding 2 sessions and
// generating 40 tokens in both, default limits: all 30 are served.
func TestClassBehindOneAddress(t *testing.T) {
	base := serveReal(t, ws.Limits{})
	const students, perStudent, tokens = 30, 2, 40
	var wg sync.WaitGroup
	served := make([]bool, students)
	errs := make(chan error, students*perStudent)
	for i := range students {
		wg.Add(1)
		go func() {
			defer wg.Done()
			b := newBrowser(t, base)
			if err := b.load("/lab"); err != nil {
				errs <- err
				return
			}
			u, _ := url.Parse(base)
			if len(b.jar.Cookies(u)) == 0 {
				errs <- fmt.Errorf("student %d: /lab set no visitor cookie", i)
				return
			}
			var conns []*websocket.Conn
			defer func() {
				for _, c := range conns {
					c.Close()
				}
			}()
			for range perStudent {
				c, code, err := b.session()
				if err != nil || c == nil {
					errs <- fmt.Errorf("student %d: session refused: %q %v", i, code, err)
					return
				}
				conns = append(conns, c)
			}
			var sw sync.WaitGroup
			ok := make([]bool, perStudent)
			for k, c := range conns {
				sw.Add(1)
				go func() {
					defer sw.Done()
					n, err := generate(c, tokens)
					if err != nil || n != tokens {
						errs <- fmt.Errorf("student %d session %d: %d tokens, %v", i, k, n, err)
						return
					}
					ok[k] = true
				}()
			}
			sw.Wait()
			served[i] = ok[0] && ok[1]
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	n := 0
	for _, s := range served {
		if s {
			n++
		}
	}
	t.Logf("%d of %d students behind one address served (2 sessions × %d tokens each)", n, students, tokens)
	if n != students {
		t.Fatalf("%d of %d students served", n, students)
	}
}

// TestVisitorAndAddressCaps: one browser (one cookie) is capped at the
// per-visitor limit however many tabs it opens; a client that sends no
// cookie is its address alone; all browsers of one address together are
// capped at the per-address limit, with a plain-English refusal each,
// while another address still gets in.
func TestVisitorAndAddressCaps(t *testing.T) {
	base := serveReal(t, ws.Limits{MaxSessions: 20, MaxSessionsPerVisitor: 2, MaxSessionsPerAddress: 5})
	open := func(b *browser) (string, error) {
		c, code, err := b.session()
		if c != nil {
			t.Cleanup(func() { c.Close() })
		}
		return code, err
	}
	cases := []struct {
		name string
		b    *browser
		want []string // codes of successive sessions
	}{
		{"one browser stops at the per-visitor cap", newBrowser(t, base), []string{"welcome", "welcome", "too_many_sessions"}},
		{"a second browser of the address is its own visitor", newBrowser(t, base), []string{"welcome", "welcome", "too_many_sessions"}},
		{"a third browser meets the address cap", newBrowser(t, base), []string{"welcome", "too_many_sessions"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if err := c.b.load("/"); err != nil {
				t.Fatal(err)
			}
			for i, want := range c.want {
				got, err := open(c.b)
				if err != nil {
					t.Fatal(err)
				}
				if got != want {
					t.Fatalf("session %d: %s, want %s", i+1, got, want)
				}
			}
		})
	}
	// without a cookie (curl, a script): the address alone, also capped
	// by the address's total
	bare := &browser{base: base}
	if got, _ := open(bare); got != "too_many_sessions" {
		t.Errorf("a cookieless client at a full address: %s, want too_many_sessions", got)
	}
	// another address is not affected
	other := newBrowser(t, base)
	other.hc.Transport = &http.Transport{DialContext: (&net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP("127.0.0.2")}}).DialContext}
	other.load("/")
	d := fromAddr("127.0.0.2")
	d.Jar = other.jar
	c, _, err := d.Dial("ws"+strings.TrimPrefix(base, "http")+"/ws", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var m struct {
		Type    string
		Payload struct{ Code, Message string }
	}
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	if err := c.ReadJSON(&m); err != nil || m.Type != wire.MsgWelcome {
		t.Errorf("another address while the first is full: %s %+v %v", m.Type, m.Payload, err)
	}
}

// TestVisitorCookie: a page load without a visitor cookie gets one
// (HttpOnly, SameSite=Lax, path /, 22 base64url characters); a valid
// cookie is kept; a malformed one is replaced; static files, probes and
// websocket upgrades set none.
func TestVisitorCookie(t *testing.T) {
	ts := newWSServer(t, ws.Limits{})
	get := func(path string, cookie string) *http.Cookie {
		req, _ := http.NewRequest("GET", ts.URL+path, nil)
		if cookie != "" {
			req.Header.Set("Cookie", "inferscope_visitor="+cookie)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		for _, c := range resp.Cookies() {
			if c.Name == "inferscope_visitor" {
				return c
			}
		}
		return nil
	}
	cases := []struct {
		path, cookie string
		set          bool
	}{
		{"/", "", true},
		{"/lab", "", true},
		{"/lessons", "", true},
		{"/lab", "AAAAAAAAAAAAAAAAAAAAAA", false},
		{"/lab", "short", true},
		{"/lab", "AAAAAAAAAAAAAAAAAAAA|A", true},
		{"/static/js/core.js", "", false},
		{"/healthz", "", false},
	}
	for _, c := range cases {
		t.Run(c.path+" "+c.cookie, func(t *testing.T) {
			ck := get(c.path, c.cookie)
			if (ck != nil) != c.set {
				t.Fatalf("cookie set = %v, want %v", ck != nil, c.set)
			}
			if ck == nil {
				return
			}
			if !ck.HttpOnly || ck.SameSite != http.SameSiteLaxMode || ck.Path != "/" || len(ck.Value) != 22 || ck.MaxAge <= 0 {
				t.Errorf("cookie %+v: want HttpOnly, SameSite=Lax, Path=/, 22 characters, a max age", ck)
			}
		})
	}
}
