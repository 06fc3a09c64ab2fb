package web_test

// model_on_disk_test.go: a model file truncated on disk while the server
// runs (`cp` over it truncates first) takes nothing down: the weights are
// the file mapped in place under a read lease, which makes the truncate
// wait until the mapping is a private copy (or, where no lease can be
// taken, were read into the server's own memory at load), so the run in
// progress goes on with the same tokens and a new visitor's run works (a
// bare mapping made it a SIGBUS in engine.rmsnorm that ended every session
// and room).

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/inferscope/inferscope/engine"
	"github.com/inferscope/inferscope/internal/testenv"
	"github.com/inferscope/inferscope/web"
	"github.com/inferscope/inferscope/web/catalog"
	"github.com/inferscope/inferscope/web/wire"
)

func TestModelTruncatedOnDiskMidRun(t *testing.T) {
	dir := testenv.Stories260KCopy(t)
	m, err := engine.LoadModel(filepath.Join(dir, "stories260K.bin"), filepath.Join(dir, "tok512.bin"))
	if err != nil {
		t.Fatal(err)
	}
	cat := catalog.NewEngineCatalog()
	if err := cat.Add(m, "", true); err != nil {
		t.Fatal(err)
	}
	ts := serveCatalog(t, web.Options{Catalog: cat})
	// 8 greedy tokens; truncate, when set, runs between the 2nd and the 3rd
	ids := func(truncate bool) []int {
		w := dial(t, ts)
		w.send("start", map[string]any{"prompt": "Once upon a time", "max_new_tokens": 8, "stop_at_eos": false, "sampling": map[string]any{"temperature": 0}})
		if m := w.read(); m.Type != wire.MsgStarted {
			t.Fatalf("start: %s %s", m.Type, m.Payload)
		}
		got := appendedIDs(t, w, 2)
		if truncate {
			if err := os.Truncate(filepath.Join(dir, "stories260K.bin"), 1<<10); err != nil {
				t.Fatal(err)
			}
		}
		return append(got, appendedIDs(t, w, 6)...)
	}
	want := ids(false)
	if got := ids(true); !slices.Equal(got, want) {
		t.Fatalf("the run whose file was truncated after 2 tokens: %v, want %v", got, want)
	}
	if got := ids(false); !slices.Equal(got, want) {
		t.Fatalf("a new visitor's run after the truncation: %v, want %v", got, want)
	}
}
