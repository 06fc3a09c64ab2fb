package main

// serve_quantized_test.go: serve --quantized offers the embedded model
// quantized at load beside it, named NAME-TYPE (a quantized type keeps its
// float weights for the model view's errors); unknown types and f32 are refused by name.

import (
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/inferscope/inferscope/engine"
)

func TestServeQuantized(t *testing.T) {
	lg := slog.New(slog.NewTextHandler(io.Discard, nil))
	for _, tt := range []struct {
		list      string
		want      []string // suffixes of the model names added
		originals bool     // float weights kept for the block view's errors
		wantErr   string
	}{
		{list: "q8_0,q4_k", want: []string{"-q8_0", "-q4_k"}, originals: true},
		{list: " bf16 ", want: []string{"-bf16"}},
		{list: "q3_k", wantErr: "--quantized"},
		{list: "f32", wantErr: "is the embedded model itself"},
	} {
		t.Run(tt.list, func(t *testing.T) {
			cat, err := buildCatalog(nil, "", "", false, lg)
			if err != nil {
				t.Fatal(err)
			}
			err = addQuantized(cat, tt.list)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			cards := cat.Models()
			if len(cards) != 1+len(tt.want) {
				t.Fatalf("%d models, want %d", len(cards), 1+len(tt.want))
			}
			base := cards[0].Name
			for i, suffix := range tt.want {
				name := cards[1+i].Name
				if name != base+suffix {
					t.Errorf("model %d named %q, want %q", 1+i, name, base+suffix)
				}
				m, err := cat.Model(name)
				if err != nil {
					t.Fatal(err)
				}
				if (m.Original != nil) != tt.originals || m.Weights.DType() == engine.F32 {
					t.Errorf("%s: stored as %s, originals kept %v", name, m.Precision(), m.Original != nil)
				}
			}
		})
	}
}
