package web_test

// nonfinite_test.go: a run producing NaN or ±Inf is stopped with a plain
// error; no message is lost.

import (
	"encoding/json"
	"math"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/inferscope/inferscope/engine"
	"github.com/inferscope/inferscope/models"
	"github.com/inferscope/inferscope/web"
	"github.com/inferscope/inferscope/web/catalog"
	"github.com/inferscope/inferscope/web/wire"
)

// nanModel is the default model's shape and tokenizer with random weights
// and one NaN in the final norm, so every logit is NaN.
func nanModel(t testing.TB) *engine.Model {
	t.Helper()
	d, err := models.Default()
	if err != nil {
		t.Fatal(err)
	}
	m, err := engine.RandomModel("nan-model", d.Config, 1)
	if err != nil {
		t.Fatal(err)
	}
	m.Tokenizer = d.Tokenizer
	m.Weights.FinalNorm[0] = float32(math.NaN())
	return m
}

// TestNonFiniteValuesEndTheRunWithAnError: an event holding NaN cannot be
// JSON; the client gets a non_finite error naming the stage, then the
// run's stop event, with no seq gap; the connection stays usable.
func TestNonFiniteValuesEndTheRunWithAnError(t *testing.T) {
	d, _ := models.Default()
	cat := catalog.NewEngineCatalog()
	cat.Add(d, "", true)
	if err := cat.Add(nanModel(t), "", false); err != nil {
		t.Fatal(err)
	}
	srv, err := web.New(web.Options{Catalog: cat})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	w := dial(t, ts) // read checks every seq is the previous + 1
	p := startPayload("The", 5)
	p["model"] = "nan-model"
	w.send("start", p)
	if m := w.read(); m.Type != wire.MsgStarted {
		t.Fatalf("start: %s %s", m.Type, m.Payload)
	}
	w.send("run", nil)
	sawError, sawStop := false, false
	for !sawStop {
		m := w.read()
		switch m.Type {
		case wire.MsgError:
			var e wire.ErrorPayload
			json.Unmarshal(m.Payload, &e)
			if e.Code != "non_finite" || !strings.Contains(e.Message, "logits event") || !strings.Contains(e.Message, "NaN") {
				t.Errorf("error %+v", e)
			}
			sawError = true
		case wire.MsgEvent:
			var e evPayload
			json.Unmarshal(m.Payload, &e)
			if e.Stage == "stop" {
				sawStop = true
			}
		default:
			t.Fatalf("unexpected %s", m.Type)
		}
	}
	if !sawError {
		t.Error("the NaN event vanished without an error")
	}
	w.send("get_logits", nil)
	w.expectError("non_finite")
	runToEnd(t, w, "The", 3)
}
