package serve

// fair_test.go: a pass's admission is fair by visitor.

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/inferscope/inferscope/engine"
)

// TestPickIsFairByVisitor: when more steps are queued than a pass holds,
// every visitor's oldest step goes first (round-robin), a lone visitor
// fills the pass, and what is left stays queued in order.
func TestPickIsFairByVisitor(t *testing.T) {
	cases := []struct {
		name  string
		queue string // one letter per queued step: its visitor
		n     int
		pass  string // the steps taken, in queue order
		rest  string
	}{
		{"everything fits", "aaab", 8, "aaab", ""},
		{"one visitor fills the pass", "aaaaaa", 4, "aaaa", "aa"},
		{"a late visitor still gets in", "aaaaaab", 4, "aaab", "aaa"},
		{"two visitors share evenly", "aaaaaabbbbbb", 6, "aaabbb", "aaabbb"},
		{"three visitors, two rounds", "aaaaabbbbbc", 5, "aabbc", "aaabbb"},
		{"a visitor with few steps leaves room to the others", "abaaaaaa", 4, "abaa", "aaaa"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := &Batcher{}
			for i, v := range c.queue {
				b.queue = append(b.queue, &request{visitor: string(v), done: make(chan struct{}), err: fmt.Errorf("%d", i)})
			}
			pass := b.pick(c.n)
			str := func(rs []*request) (s string, order []string) {
				var sb strings.Builder
				for _, r := range rs {
					sb.WriteString(r.visitor)
					order = append(order, r.err.Error())
				}
				return sb.String(), order
			}
			got, po := str(pass)
			rest, ro := str(b.queue)
			if got != c.pass || rest != c.rest {
				t.Fatalf("pass %q rest %q, want %q and %q", got, rest, c.pass, c.rest)
			}
			for _, o := range [][]string{po, ro} {
				if !slices.IsSortedFunc(o, func(a, b string) int { return len(a)*1000 - len(b)*1000 + strings.Compare(a, b) }) {
					t.Errorf("out of queue order: %v", o)
				}
			}
		})
	}
}

// TestDoneSessionsAreNotWaitedFor: a pass waits for the sessions decoding
// lately to queue their steps, but not for one whose run is done (a lone
// student restarting runs used to wait for their old runs each step).
func TestDoneSessionsAreNotWaitedFor(t *testing.T) {
	b := &Batcher{opt: Options{MaxBatch: 8, MaxWait: time.Second}, seen: map[*engine.KVCache]time.Time{}, lastPass: time.Second}
	old, cur := &engine.KVCache{}, &engine.KVCache{}
	ended := b.For("a")
	ended.kv = old // as its Decode records
	b.seen[old] = time.Now()
	queue := func() {
		b.queue = append(b.queue, &request{seq: &engine.BatchSeq{KV: cur}, visitor: "a", enq: time.Now()})
	}
	b.seen[cur] = time.Now()
	queue()
	if batch, wait := b.take(); batch != nil || wait <= 0 {
		t.Fatalf("with another session decoding lately: batch %d, wait %v; want a wait for it", len(batch), wait)
	}
	ended.Done()
	if batch, wait := b.take(); len(batch) != 1 || wait != 0 {
		t.Fatalf("after the other run is done: batch %d, wait %v; want the lone step at once", len(batch), wait)
	}
}

// TestPickIsFairByAddressFirst: visitors that share an address (a class
// behind one NAT) share that address's part of a pass; a lone visitor at
// another address keeps its own part; within the address its visitors go
// round-robin.
func TestPickIsFairByAddressFirst(t *testing.T) {
	cases := []struct {
		name  string
		queue []string // each queued step's visitor key
		n     int
		pass  []string // in queue order
	}{
		{"class of four and a lone machine", []string{"n|1", "n|1", "n|2", "n|2", "n|3", "n|3", "n|4", "n|4", "l", "l"}, 4,
			[]string{"n|1", "n|2", "l", "l"}},
		{"within the address round-robin", []string{"n|1", "n|1", "n|1", "n|2", "l"}, 3,
			[]string{"n|1", "n|2", "l"}},
		{"one address alone: its visitors round-robin", []string{"n|1", "n|1", "n|1", "n|2", "n|3"}, 3,
			[]string{"n|1", "n|2", "n|3"}},
		{"address without browser ids is one visitor", []string{"a", "a", "a", "b|x", "b|y"}, 4,
			[]string{"a", "a", "b|x", "b|y"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := &Batcher{}
			for _, v := range c.queue {
				b.queue = append(b.queue, &request{visitor: v, done: make(chan struct{})})
			}
			var got []string
			for _, r := range b.pick(c.n) {
				got = append(got, r.visitor)
			}
			if !slices.Equal(got, c.pass) {
				t.Fatalf("pass %v, want %v", got, c.pass)
			}
		})
	}
}

func TestAddressOf(t *testing.T) {
	for _, c := range []struct{ key, addr string }{{"203.0.113.7", "203.0.113.7"}, {"203.0.113.7|abc", "203.0.113.7"}, {"::1|x", "::1"}, {VisitorKey("10.0.0.1", ""), "10.0.0.1"}, {VisitorKey("10.0.0.1", "id"), "10.0.0.1"}} {
		if got := AddressOf(c.key); got != c.addr {
			t.Errorf("AddressOf(%q) = %q, want %q", c.key, got, c.addr)
		}
	}
}
