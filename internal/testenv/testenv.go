// Package testenv holds test helpers for resources that a developer's clone
// may lack (the shared reference models, a browser): tests skip with a clear
// message locally and fail when CI=true, so CI never silently skips.
package testenv

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// InCI reports whether the tests run under CI (CI=true).
func InCI() bool { return os.Getenv("CI") == "true" }

// Unavailable skips the test, or fails it under CI, explaining what is missing.
func Unavailable(t testing.TB, format string, args ...any) {
	t.Helper()
	if InCI() {
		t.Fatalf("CI=true and a required test resource is missing: "+format, args...)
	}
	t.Skipf("skipped: "+format+" (CI=true makes this a failure)", args...)
}

// RepoRoot is the directory holding go.mod.
func RepoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
}

// SharedDir returns ../shared/<rel> next to the repository (where the
// reference models live), skipping or failing the test when it is absent.
func SharedDir(t testing.TB, rel string) string {
	t.Helper()
	p := filepath.Join(RepoRoot(), "..", "shared", rel)
	if _, err := os.Stat(p); err != nil {
		Unavailable(t, "reference file %s not found; it lives beside the repository at ../shared/, which a user's clone does not have", p)
	}
	return p
}
