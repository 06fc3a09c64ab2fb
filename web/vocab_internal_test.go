package web

// vocab_internal_test.go: /api/vocab costs a scan of the vocabulary, so it
// waits for a slot of the fair queue like engine work and is rate-limited
// per visitor.

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func vocabServer(t *testing.T) *Server {
	t.Helper()
	s, err := New(Options{Catalog: defaultEngineCatalog(t), EngineSlots: 2})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func vocabGet(s *Server, ctx context.Context, addr string) *httptest.ResponseRecorder {
	r := localRequest(http.MethodGet, "/api/vocab?q=the", nil).WithContext(ctx)
	r.RemoteAddr = addr + ":40000"
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, r)
	return rec
}

// TestVocabWaitsForTheFairQueue: while a visitor holds every engine slot it
// may, its searches wait (and give up with its request); another address's
// search is served.
func TestVocabWaitsForTheFairQueue(t *testing.T) {
	s := vocabServer(t)
	var rel []func()
	for range 2 {
		r, err := s.sched.Acquire(context.Background(), "192.0.2.1")
		if err != nil {
			t.Fatal(err)
		}
		rel = append(rel, r)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Millisecond)
	defer cancel()
	if rec := vocabGet(s, ctx, "192.0.2.1"); rec.Code != http.StatusServiceUnavailable {
		t.Fatalf("a search while its visitor holds every slot: %d %s, want 503 after waiting", rec.Code, rec.Body)
	}
	rel[0]() // one slot frees: the other address's search gets it
	if rec := vocabGet(s, context.Background(), "192.0.2.2"); rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `"tokens"`) {
		t.Fatalf("another address's search: %d %s", rec.Code, rec.Body)
	}
	rel[1]()
	if rec := vocabGet(s, context.Background(), "192.0.2.1"); rec.Code != http.StatusOK {
		t.Fatalf("after the slots are free: %d %s", rec.Code, rec.Body)
	}
}

// TestVocabRatePerVisitor: past the burst a visitor gets 429 naming the
// limit; another visitor is still answered; the bucket refills.
func TestVocabRatePerVisitor(t *testing.T) {
	s := vocabServer(t)
	now := time.Now()
	s.vocabRate.Now = func() time.Time { return now }
	s.vocabDelay = time.Millisecond // (a second in serve: a looping client then asks once a second)
	ok := 0
	var last *httptest.ResponseRecorder
	for range vocabBurst + 5 {
		last = vocabGet(s, context.Background(), "192.0.2.1")
		if last.Code == http.StatusOK {
			ok++
		}
	}
	if ok != vocabBurst || last.Code != http.StatusTooManyRequests || !strings.Contains(last.Body.String(), "per second per visitor") {
		t.Fatalf("%d of %d searches answered, the last %d %s; want the burst (%d), then 429 naming the limit", ok, vocabBurst+5, last.Code, last.Body, vocabBurst)
	}
	if rec := vocabGet(s, context.Background(), "192.0.2.2"); rec.Code != http.StatusOK {
		t.Fatalf("another visitor: %d", rec.Code)
	}
	now = now.Add(time.Second)
	if rec := vocabGet(s, context.Background(), "192.0.2.1"); rec.Code != http.StatusOK {
		t.Fatalf("a second later: %d, want the bucket refilled", rec.Code)
	}
}
