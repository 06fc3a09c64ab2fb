package web_test

// weightblock_test.go: the weight_block websocket command: a Q4_K block of
// a model quantized at load comes back with the engine's numbers; bad
// arguments are refused with a message naming what is allowed.

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/inferscope/inferscope/engine"
	"github.com/inferscope/inferscope/models"
	"github.com/inferscope/inferscope/web"
	"github.com/inferscope/inferscope/web/catalog"
	"github.com/inferscope/inferscope/web/wire"
)

func TestWeightBlockCommand(t *testing.T) {
	dm, err := models.Default()
	if err != nil {
		t.Fatal(err)
	}
	q := dm.WithWeights(engine.Q4_K)
	qm := &engine.Model{Name: "default-q4_k", Source: dm.Source, Config: q.Config, Weights: q.Weights, Tokenizer: q.Tokenizer, Original: q.Original}
	cat := catalog.NewEngineCatalog()
	if err := cat.Add(dm, "", true); err != nil {
		t.Fatal(err)
	}
	if err := cat.Add(qm, "", false); err != nil {
		t.Fatal(err)
	}
	ts := serveCatalog(t, web.Options{Catalog: cat})
	c := dial(t, ts)

	req := engine.WeightBlockRequest{Matrix: "wv", Layer: 2, Row: 17, Block: 0}
	want, err := qm.WeightBlock(req)
	if err != nil {
		t.Fatal(err)
	}
	c.send(wire.CmdWeightBlock, map[string]any{"model": qm.Name, "matrix": "wv", "layer": 2, "row": 17, "block": 0})
	m := c.read()
	if m.Type != wire.MsgWeightBlock {
		t.Fatalf("got %s %s", m.Type, m.Payload)
	}
	var got engine.WeightBlock
	if err := json.Unmarshal(m.Payload, &got); err != nil {
		t.Fatal(err)
	}
	if got.Type != "Q4_K" || len(got.Values) != 256 || len(got.Original) != 256 || len(got.SubScales) != 8 || got.D != want.D || got.MaxAbsError != want.MaxAbsError {
		t.Fatalf("block %s, %d values, %d originals, %d sub-scales, d %g (want %g)", got.Type, len(got.Values), len(got.Original), len(got.SubScales), got.D, want.D)
	}
	for i := range want.Values {
		if got.Values[i] != want.Values[i] || got.Quants[i] != want.Quants[i] || got.Error[i] != want.Error[i] {
			t.Fatalf("value %d: %g/%d/%g, engine %g/%d/%g", i, got.Values[i], got.Quants[i], got.Error[i], want.Values[i], want.Quants[i], want.Error[i])
		}
	}
	for _, bad := range []struct {
		payload   map[string]any
		code, msg string
	}{
		{map[string]any{"model": qm.Name, "matrix": "wx"}, wire.CodeBadPayload, "is not one of embed, wq, wk, wv, wo, gate, up, down, head"},
		{map[string]any{"model": qm.Name, "matrix": "wq", "row": -1}, wire.CodeBadPayload, "count from 0"},
		{map[string]any{"model": qm.Name, "matrix": "wq", "rows": 1}, wire.CodeBadPayload, `unknown field "rows"`},
		{map[string]any{"model": qm.Name, "matrix": "wq", "layer": 9}, wire.CodeBadRequest, "layer 9 out of range: allowed 0 to 3"},
		{map[string]any{"model": qm.Name, "matrix": "down", "block": 22}, wire.CodeBadRequest, "blocks 0 to 21"},
		{map[string]any{"matrix": "wq"}, wire.CodeBadRequest, "stored as f32"},
		{map[string]any{"model": "nope", "matrix": "wq"}, wire.CodeBadRequest, `unknown model "nope"`},
	} {
		c.send(wire.CmdWeightBlock, bad.payload)
		m := c.read()
		var e struct{ Code, Message string }
		json.Unmarshal(m.Payload, &e)
		if m.Type != wire.MsgError || e.Code != bad.code || !strings.Contains(e.Message, bad.msg) {
			t.Errorf("%v: %s %s %q, want %s saying %q", bad.payload, m.Type, e.Code, e.Message, bad.code, bad.msg)
		}
	}
}
