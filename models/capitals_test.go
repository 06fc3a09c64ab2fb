package models

// capitals_test.go: the engine's capital check reproduces the one recorded
// in the model card, and the lesson's running example comes out right.

import (
	"encoding/json"
	"os"
	"testing"
)

func TestDefaultModelKnowsCapitals(t *testing.T) {
	m, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile("default/capitals.json")
	if err != nil {
		t.Fatal(err)
	}
	var caps []Capital
	if err := json.Unmarshal(b, &caps); err != nil {
		t.Fatal(err)
	}
	got, err := EvalCapitals(m, caps)
	if err != nil {
		t.Fatal(err)
	}
	b, err = File("capitals_eval.json")
	if err != nil {
		t.Fatal(err)
	}
	var want CapitalEval
	if err := json.Unmarshal(b, &want); err != nil {
		t.Fatal(err)
	}
	if got.Right != want.Right || got.Total != want.Total || len(got.Countries) != len(want.Countries) {
		t.Fatalf("engine: %d of %d right, the model card says %d of %d (regenerate: go run ./scripts/train/samples models/default)",
			got.Right, got.Total, want.Right, want.Total)
	}
	for i, c := range got.Countries {
		if c != want.Countries[i] {
			t.Errorf("%s: engine %+v, recorded %+v", c.Country, c, want.Countries[i])
		}
	}
	// the reference lesson's running example
	if got.France != " Paris" {
		t.Errorf(`greedy "The capital of France is" continues with %q, want " Paris"`, got.France)
	}
	if got.Total < 200 {
		t.Errorf("only %d countries checked", got.Total)
	}
}
