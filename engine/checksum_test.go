package engine

// checksum_test.go: RecheckWeightsSince answers the weights' checksum, and runs
// asking at once share hashes, each started after its callers asked.

import (
	"sync"
	"testing"
	"time"
)

func TestRecheckWeightsShared(t *testing.T) {
	m, err := RandomModel("recheck", Shapes["stories15M"], 2) // 60 MB: a hash lasts while the callers arrive
	if err != nil {
		t.Fatal(err)
	}
	want := m.WeightsChecksum()
	if got := m.RecheckWeightsSince(time.Now()); got != want {
		t.Fatalf("recheck %s, checksum %s", got, want)
	}
	const callers = 64
	var wg sync.WaitGroup
	start := make(chan struct{})
	for range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			if got := m.RecheckWeightsSince(time.Now()); got != want {
				t.Errorf("recheck %s, checksum %s", got, want)
			}
		}()
	}
	close(start)
	wg.Wait()
	m.checksum.mu.Lock()
	rounds := m.checksum.rounds - 1
	m.checksum.mu.Unlock()
	if rounds < 1 || rounds >= callers {
		t.Fatalf("%d callers at once hashed %d times", callers, rounds)
	}
	t.Logf("%d callers at once: %d hashes", callers, rounds)
	// a call after the others have their answer starts a hash of its own
	if m.RecheckWeightsSince(time.Now()) != want {
		t.Fatal("recheck after")
	}
	if m.checksum.rounds != rounds+2 {
		t.Fatalf("a later call shared an earlier hash (%d hashes)", m.checksum.rounds)
	}
}

// TestRecheckWeightsSince: a caller whose last use of the weights came
// before the latest hash began shares that hash; one whose last use came
// after it gets a new hash, started after that use.
func TestRecheckWeightsSince(t *testing.T) {
	m, err := RandomModel("recheck-since", Shapes["stories15M"], 3)
	if err != nil {
		t.Fatal(err)
	}
	want := m.WeightsChecksum()
	used := time.Now()
	if m.RecheckWeightsSince(time.Now()) != want {
		t.Fatal("first recheck")
	}
	m.checksum.mu.Lock()
	first := m.checksum.running.start
	m.checksum.mu.Unlock()
	for _, c := range []struct {
		name  string
		since time.Time
		more  int // new hashes
	}{
		{"used before the last hash began: shared", used, 0},
		{"used exactly when it began: shared", first, 0},
		{"used after it began: hashed anew", first.Add(time.Nanosecond), 1},
	} {
		m.checksum.mu.Lock()
		n := m.checksum.rounds
		m.checksum.mu.Unlock()
		if got := m.RecheckWeightsSince(c.since); got != want {
			t.Fatalf("%s: %s, want %s", c.name, got, want)
		}
		m.checksum.mu.Lock()
		got, start := m.checksum.rounds-n, m.checksum.running.start
		m.checksum.mu.Unlock()
		if got != c.more {
			t.Errorf("%s: %d new hashes, want %d", c.name, got, c.more)
		}
		if start.Before(c.since) {
			t.Errorf("%s: answered by a hash that began %v before the caller's last use", c.name, c.since.Sub(start))
		}
	}
}

// TestRecheckWeightsAtSharesARecentHash: a hash begun within the window
// the caller accepts is shared (one read of the weights for runs stopping
// seconds apart), with when it began; a caller that accepts only a hash
// begun from now on gets a new one.
func TestRecheckWeightsAtSharesARecentHash(t *testing.T) {
	m, err := RandomModel("recheck-at", Shapes["stories15M"], 3)
	if err != nil {
		t.Fatal(err)
	}
	first, at := m.RecheckWeightsAt(time.Now())
	again, at2 := m.RecheckWeightsAt(time.Now().Add(-5 * time.Second))
	if again != first || !at2.Equal(at) || m.checksum.rounds != 1 {
		t.Fatalf("within the window: %s at %v (first %s at %v), %d rounds; want the same hash, one round", again, at2, first, at, m.checksum.rounds)
	}
	fresh, at3 := m.RecheckWeightsAt(time.Now())
	if fresh != first || !at3.After(at) || m.checksum.rounds != 2 {
		t.Fatalf("from now on: %v after %v, %d rounds; want a new round", at3, at, m.checksum.rounds)
	}
}
