//go:build !engineonly

package main

// main_test.go: command dispatch and serve's shutdown on cancel.

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestCLIDispatch(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		wantCode int
		wantErr  string
	}{
		{"top help", []string{"--help"}, 0, "Commands:"},
		{"unknown command", []string{"frobnicate"}, 2, `unknown command "frobnicate"`},
		{"serve help", []string{"serve", "--help"}, 0, "-addr"},
		{"serve bad flag", []string{"serve", "--nope"}, 2, "flag provided but not defined"},
		{"serve stray arg", []string{"serve", "extra"}, 2, `unexpected argument "extra"`},
		{"serve bad addr", []string{"serve", "--addr", "256.0.0.1:x"}, 1, "listen on 256.0.0.1:x"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			code := run(context.Background(), tt.args, &out, &errb)
			if code != tt.wantCode {
				t.Errorf("exit %d, want %d; stderr %q", code, tt.wantCode, errb.String())
			}
			if !strings.Contains(errb.String()+out.String(), tt.wantErr) {
				t.Errorf("output lacks %q: %q", tt.wantErr, errb.String()+out.String())
			}
		})
	}
}

// lockedBuffer is a bytes.Buffer safe for the server writing its log while
// the test reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestServeShutsDownOnCancel: serve listens, answers a request, and on
// cancel shuts down and exits 0, after which nothing listens.
func TestServeShutsDownOnCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out, errb lockedBuffer
	done := make(chan int, 1)
	go func() { done <- run(ctx, []string{"serve", "--addr", "127.0.0.1:0"}, &out, &errb) }()
	url := regexp.MustCompile(`url=(http://127\.0\.0\.1:\d+/)`)
	var base string
	for deadline := time.Now().Add(30 * time.Second); base == ""; time.Sleep(10 * time.Millisecond) {
		if m := url.FindStringSubmatch(errb.String()); m != nil {
			base = m[1]
		}
		select {
		case code := <-done:
			t.Fatalf("serve exited %d before listening: %s", code, errb.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("serve never said where it listens: %s", errb.String())
		}
	}
	resp, err := http.Get(base + "healthz")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(body) != "ok\n" {
		t.Fatalf("/healthz: %d %q", resp.StatusCode, body)
	}
	cancel()
	if code := <-done; code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if !strings.Contains(errb.String(), "shutting down") {
		t.Errorf("no shutdown in the log: %s", errb.String())
	}
	if _, err := http.Get(base + "healthz"); err == nil {
		t.Error("the server still answers after it shut down")
	}
}
