// Package testenv holds test helpers for resources that a developer's clone
// may lack (the shared reference models, a browser): tests skip with a clear
// message locally and fail when CI=true, so CI never silently skips.
package testenv

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
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

// Stories260K is the directory of llama2.c's stories260K checkpoint and its
// tok512 tokenizer (MIT, 1 MB, PROVENANCE.md beside them), kept in
// engine/testdata so the real-model tests run in every clone.
func Stories260K() string {
	return filepath.Join(RepoRoot(), "engine", "testdata", "stories260K")
}

// Stories260KCopy copies the stories260K checkpoint and tokenizer into a
// temporary directory (removed at cleanup) and returns it, for tests that
// change the files on disk.
func Stories260KCopy(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	for _, name := range []string{"stories260K.bin", "tok512.bin"} {
		b, err := os.ReadFile(filepath.Join(Stories260K(), name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// ExpectedTop is one row of expected-greedy.md's top-5 table: llama2.c's
// logits at a position.
type ExpectedTop struct {
	Pos, Token, Argmax int
	Top                [][2]float64 // (id, logit) pairs
}

// Stories260KExpected reads expected-greedy.md: the texts of each prompt and the
// top-5 table.
func Stories260KExpected(t *testing.T) (texts map[string]string, rows []ExpectedTop) {
	t.Helper()
	dir := Stories260K()
	f, err := os.Open(filepath.Join(dir, "expected-greedy.md"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	texts = map[string]string{}
	sc := bufio.NewScanner(f)
	var cur string
	var in bool
	var buf []string
	pair := regexp.MustCompile(`\((\d+), (-?[\d.]+)\)`)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "## \"") && !strings.Contains(line, "Top-5"):
			cur = strings.Trim(strings.TrimPrefix(line, "## "), `"`)
		case line == "```" && cur != "" && !in:
			in, buf = true, nil
		case line == "```" && in:
			in = false
			texts[cur] = strings.Join(buf, "\n")
			cur = ""
		case in:
			buf = append(buf, line)
		case strings.HasPrefix(line, "| ") && pair.MatchString(line):
			cells := strings.Split(line, "|")
			var r ExpectedTop
			r.Pos, _ = strconv.Atoi(strings.TrimSpace(cells[1]))
			r.Token, _ = strconv.Atoi(strings.TrimSpace(cells[2]))
			r.Argmax, _ = strconv.Atoi(strings.TrimSpace(cells[3]))
			for _, m := range pair.FindAllStringSubmatch(cells[4], -1) {
				id, _ := strconv.Atoi(m[1])
				v, _ := strconv.ParseFloat(m[2], 64)
				r.Top = append(r.Top, [2]float64{float64(id), v})
			}
			rows = append(rows, r)
		}
	}
	if len(texts) < 2 || len(rows) < 10 {
		t.Fatalf("parsed %d texts and %d rows from expected-greedy.md", len(texts), len(rows))
	}
	return texts, rows
}
