package web_test

// memory_test.go: runs count their scratch and KV cache against --max-kv-
// bytes as they grow.

import (
	"encoding/json"
	"net/http/httptest"
	"testing"

	"github.com/inferscope/inferscope/engine/session"
	"github.com/inferscope/inferscope/models"
	"github.com/inferscope/inferscope/web"
	"github.com/inferscope/inferscope/web/catalog"
	"github.com/inferscope/inferscope/web/wire"
	"github.com/inferscope/inferscope/web/ws"
)

// TestKVIsReservedAsUsed: idle runs hold their scratch and the prompt's KV
// cache, not the whole max_new_tokens, so a few idle sessions cannot
// reserve the budget; a run that outgrows it stops with server_full and
// others carry on.
func TestKVIsReservedAsUsed(t *testing.T) {
	m, _ := models.Default()
	cat := catalog.NewEngineCatalog()
	cat.Add(m, "", true)
	p := startPayload("The", 200)
	probe, err := cat.NewRun("", (&wire.StartPayload{Prompt: "The", MaxNewTokens: 200}).SessionConfig())
	if err != nil {
		t.Fatal(err)
	}
	perToken := m.Config.KVBytesPerToken()
	atStart := probe.Runner.MemoryBytes()
	budget := 3*atStart + 20*perToken // three idle runs fit; 200 tokens each would not
	srv, _ := web.New(web.Options{Catalog: cat, Limits: ws.Limits{MaxKVBytes: budget}})
	ts := httptest.NewServer(srv)
	defer ts.Close()
	var ws []*wsClient
	for i := 0; i < 3; i++ {
		w := dial(t, ts)
		w.send("start", p)
		if msg := w.read(); msg.Type != wire.MsgStarted {
			t.Fatalf("idle run %d of 3: %s %s (allocated KV %d each, budget %d)", i, msg.Type, msg.Payload, int64(201)*perToken, budget)
		}
		ws = append(ws, w)
	}
	a := ws[0]
	a.send("run", nil)
	var code string
	for {
		msg := a.read()
		if msg.Type == wire.MsgError {
			var e wire.ErrorPayload
			json.Unmarshal(msg.Payload, &e)
			code = e.Code
			continue
		}
		var e evPayload
		json.Unmarshal(msg.Payload, &e)
		if e.Stage == string(session.StageStop) {
			break
		}
	}
	if code != "server_full" {
		t.Errorf("a run outgrowing the budget: error %q, want server_full", code)
	}
	ws[1].send("step", nil)
	if e := ws[1].event(); e.Stage != "tokenize" {
		t.Errorf("another session after that: %s", e.Stage)
	}
}
