package engine

// checksum_test.go: RecheckWeights answers the weights' checksum, and runs
// asking at once share hashes, each started after its callers asked.

import (
	"sync"
	"testing"
)

func TestRecheckWeightsShared(t *testing.T) {
	m, err := RandomModel("recheck", Shapes["stories15M"], 2) // 60 MB: a hash lasts while the callers arrive
	if err != nil {
		t.Fatal(err)
	}
	want := m.WeightsChecksum()
	if got := m.RecheckWeights(); got != want {
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
			if got := m.RecheckWeights(); got != want {
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
	if m.RecheckWeights() != want {
		t.Fatal("recheck after")
	}
	if m.checksum.rounds != rounds+2 {
		t.Fatalf("a later call shared an earlier hash (%d hashes)", m.checksum.rounds)
	}
}
