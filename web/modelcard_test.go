package web_test

// modelcard_test.go: the model card page and its images, and the card URL in /api/models.

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/inferscope/inferscope/models"
	"github.com/inferscope/inferscope/web"
	"github.com/inferscope/inferscope/web/catalog"
)

func TestModelCardPage(t *testing.T) {
	m, err := models.Default()
	if err != nil {
		t.Fatal(err)
	}
	cat := catalog.NewEngineCatalog()
	if err := cat.Add(m, "", true); err != nil {
		t.Fatal(err)
	}
	if err := cat.AddDocs("nope", models.Docs(), nil); err == nil {
		t.Error("docs for a model that is not loaded were accepted")
	}
	if err := cat.AddDocs(m.Name, fstest.MapFS{"x.svg": {}}, nil); err == nil || !strings.Contains(err.Error(), "MODEL_CARD.md") {
		t.Errorf("docs without MODEL_CARD.md: err %v", err)
	}
	if err := cat.AddDocs(m.Name, models.Docs(), &catalog.Training{Corpus: "test", CapitalsTotal: 3}); err != nil {
		t.Fatal(err)
	}
	srv, err := web.New(web.Options{Catalog: cat})
	if err != nil {
		t.Fatal(err)
	}
	get := func(path string) (int, string, string) {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(http.MethodGet, path, nil)
		req.Host = "localhost" // the Host allowlist serves loopback names
		srv.ServeHTTP(rec, req)
		b, _ := io.ReadAll(rec.Body)
		return rec.Code, rec.Header().Get("Content-Type"), string(b)
	}

	code, _, body := get("/api/models")
	var list struct{ Models []catalog.ModelCard }
	err = json.Unmarshal([]byte(body), &list)
	cards := list.Models
	if err != nil || code != 200 || len(cards) != 1 {
		t.Fatalf("/api/models: %d %v %s", code, err, body)
	}
	url := cards[0].CardURL
	if url != "/models/"+m.Name+"/card" || cards[0].Trained == nil || cards[0].Trained.CapitalsTotal != 3 {
		t.Fatalf("card_url %q, trained %+v", url, cards[0].Trained)
	}
	tests := []struct {
		path     string
		status   int
		ctype    string
		contains []string
	}{
		{url, 200, "text/html", []string{`data-testid="model-card-page"`, "<table>", `src="loss_curve.svg"`, "Training data", "Brown Corpus"}},
		{"/models/" + m.Name + "/loss_curve.svg", 200, "image/svg+xml", []string{"<svg", "validation loss"}},
		{"/models/" + m.Name + "/MODEL_CARD.md", 404, "", []string{".svg"}},
		{"/models/" + m.Name + "/none.svg", 404, "", []string{"none.svg"}},
		{"/models/other/card", 404, "", []string{"other"}},
	}
	for _, tt := range tests {
		code, ctype, body := get(tt.path)
		if code != tt.status || !strings.Contains(ctype, tt.ctype) {
			t.Errorf("GET %s: %d %q, want %d %q", tt.path, code, ctype, tt.status, tt.ctype)
		}
		for _, w := range tt.contains {
			if !strings.Contains(body, w) {
				t.Errorf("GET %s: body lacks %q", tt.path, w)
			}
		}
	}
}
