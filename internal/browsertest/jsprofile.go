package browsertest

// jsprofile.go: INFERSCOPE_JS_PROFILE=DIR writes each tab's JavaScript CPU
// profile (DevTools' Profiler, 1 ms samples) to DIR/<test>-<n>.cpuprofile
// when the test ends, for finding what the pages and test scripts cost
// (open it in Chromium's DevTools, Performance panel). Off by default.

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/profiler"
	"github.com/chromedp/chromedp"
)

var profiles atomic.Int64

func profileJS(t testing.TB, ctx context.Context, dir string) {
	t.Helper()
	start := chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		if _, err := cdp.Call(ctx, tg, profiler.Enable, cdp.Empty{}); err != nil {
			return err
		}
		if _, err := cdp.Call(ctx, tg, profiler.SetSamplingInterval, profiler.SetSamplingIntervalParams{Interval: 1000}); err != nil {
			return err
		}
		_, err := cdp.Call(ctx, tg, profiler.Start, cdp.Empty{})
		return err
	})
	if _, err := chromedp.Run(ctx, start); err != nil {
		t.Fatalf("start the JavaScript profiler: %v", err)
	}
	t.Cleanup(func() {
		stop := chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
			r, err := cdp.Call(ctx, tg, profiler.Stop, cdp.Empty{})
			if err != nil {
				return err
			}
			js, err := json.Marshal(r.Profile)
			if err != nil {
				return err
			}
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return err
			}
			name := strings.NewReplacer("/", "_", " ", "_").Replace(t.Name())
			return os.WriteFile(filepath.Join(dir, fmt.Sprintf("%s-%d.cpuprofile", name, profiles.Add(1))), js, 0o644)
		})
		if _, err := chromedp.Run(ctx, stop); err != nil {
			t.Errorf("write the JavaScript profile: %v", err)
		}
	})
}
