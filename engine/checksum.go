package engine

// checksum.go: the loaded model's weights checksum, computed once per Model
// and kept with it (the app shows it before and after every run), and the
// checksum again after a run, shared by the runs that ask at once.

import (
	"encoding/hex"
	"sync"
	"time"
)

type checksum struct {
	once sync.Once
	hex  string

	// RecheckWeightsSince's rounds: pending collects callers until it starts;
	// running is the round hashing now (or the last one)
	mu      sync.Mutex
	pending *hashRound
	running *hashRound
	rounds  int // hashes RecheckWeightsSince has started (tests)
}

// hashRound is one hash of the weights shared by the callers that joined
// it before it started.
type hashRound struct {
	done  chan struct{}
	hex   string
	start time.Time // when it began hashing (set under checksum.mu)
}

// WeightsChecksum is the hex SHA-256 of the model's weights as loaded
// (Weights.Checksum), computed on first use and then remembered.
func (m *Model) WeightsChecksum() string {
	m.checksum.once.Do(func() {
		sum := m.Weights.Checksum()
		m.checksum.hex = hex.EncodeToString(sum[:])
	})
	return m.checksum.hex
}

// RecheckWeightsSince hashes the weights again, as WeightsChecksum's hex:
// the proof, after a run, that they did not change. since is when the
// caller last used the weights (its run's last forward pass; time.Now()
// for a hash that starts after the call): every answer is a hash that
// started at or after since, which is all the proof needs. A round
// that started after since (running or done) is shared; otherwise the
// caller joins the next round, which starts when the running one ends. So
// 64 runs stopping within a few milliseconds of each other read the
// weights a few times, not 64.
func (m *Model) RecheckWeightsSince(since time.Time) string {
	hex, _ := m.RecheckWeightsAt(since)
	return hex
}

// RecheckWeightsAt is RecheckWeightsSince also saying when the hash it
// answers with began. Called with since a few seconds back, a server that
// stops many runs hashes its weights once every few seconds, not once a
// run (the weights are read-only memory besides: a write would fault).
func (m *Model) RecheckWeightsAt(since time.Time) (string, time.Time) {
	c := &m.checksum
	c.mu.Lock()
	if rd := c.running; rd != nil && !rd.start.Before(since) { // began after since: share it
		c.mu.Unlock()
		<-rd.done
		return rd.hex, rd.start
	}
	if rd := c.pending; rd != nil { // a round not started yet: join it
		c.mu.Unlock()
		<-rd.done
		return rd.hex, rd.start
	}
	rd := &hashRound{done: make(chan struct{})}
	c.pending = rd
	prev := c.running
	c.mu.Unlock()
	if prev != nil {
		<-prev.done // it started before since: wait, then hash anew
	}
	c.mu.Lock()
	rd.start = time.Now()
	c.pending, c.running = nil, rd // started: later callers make the next round
	c.rounds++
	c.mu.Unlock()
	sum := m.Weights.Checksum()
	rd.hex = hex.EncodeToString(sum[:])
	close(rd.done)
	return rd.hex, rd.start
}
