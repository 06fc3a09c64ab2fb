//go:build !engineonly

package main

// main_test.go: command dispatch and serve's shutdown on cancel.

import (
	"bytes"
	"context"
	"strings"
	"testing"
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

func TestServeShutsDownOnCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var out, errb bytes.Buffer
	done := make(chan int)
	go func() { done <- run(ctx, []string{"serve", "--addr", "127.0.0.1:0"}, &out, &errb) }()
	cancel()
	if code := <-done; code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
}
