package web

// rooms_bench_test.go: the classroom fan-out benchmark on loopback: one
// presenter runs the default model to the end while 200 followers watch;
// every follower must receive every event in order. Reported: fan-out
// latency from the room publishing an event to the last follower reading
// it (p50, p99, max over events), process CPU per follower per event and
// heap per follower (both include the benchmark's own follower clients,
// which run in the same process), with the in-process fan-out and with
// NATS and two replicas (followers split across both).
//
//	go test -run '^$' -bench RoomFanout -benchtime 1x ./web/

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"runtime"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	natsserver "github.com/nats-io/nats-server/v2/server"

	"github.com/inferscope/inferscope/engine"
	"github.com/inferscope/inferscope/models"
)

func benchServer(b *testing.B, m *engine.Model, f Fanout) (*Server, *httptest.Server) {
	cat := NewEngineCatalog()
	if err := cat.Add(m, "", true); err != nil {
		b.Fatal(err)
	}
	srv, err := New(Options{Catalog: cat, Rooms: RoomOptions{Fanout: f, MaxFollowers: 1000}})
	if err != nil {
		b.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	b.Cleanup(ts.Close)
	return srv, ts
}

func wsURL(ts *httptest.Server, path string) string {
	return "ws" + strings.TrimPrefix(ts.URL, "http") + path
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func heapInUse() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapInuse + ms.StackInuse
}

func BenchmarkRoomFanout(b *testing.B) {
	m, err := models.Default()
	if err != nil {
		b.Fatal(err)
	}
	for _, mode := range []string{"local", "nats-2-replicas"} {
		b.Run(mode, func(b *testing.B) {
			var servers []*Server
			var tss []*httptest.Server
			if mode == "local" {
				s, ts := benchServer(b, m, nil)
				servers, tss = append(servers, s), append(tss, ts)
			} else {
				ns, err := natsserver.NewServer(&natsserver.Options{Host: "127.0.0.1", Port: -1, NoLog: true, NoSigs: true})
				if err != nil {
					b.Fatal(err)
				}
				go ns.Start()
				if !ns.ReadyForConnections(10 * time.Second) {
					b.Fatal("nats did not start")
				}
				b.Cleanup(ns.Shutdown)
				for range 2 {
					f, err := NewNATSFanout(ns.ClientURL())
					if err != nil {
						b.Fatal(err)
					}
					b.Cleanup(func() { f.Close() })
					s, ts := benchServer(b, m, f)
					servers, tss = append(servers, s), append(tss, ts)
				}
			}
			for i := 0; i < b.N; i++ {
				for _, followers := range []int{0, 200} {
					r := fanoutRun(b, servers, tss, followers, 200)
					if followers == 0 {
						b.Logf("%s, no followers: %d events, cpu %v", mode, r.events, r.cpu)
						continue
					}
					b.ReportMetric(r.p50.Seconds()*1000, "p50-ms")
					b.ReportMetric(r.p99.Seconds()*1000, "p99-ms")
					b.ReportMetric(r.max.Seconds()*1000, "max-ms")
					b.ReportMetric(float64(r.events), "events")
					b.ReportMetric(float64(r.bytes)/float64(r.events), "B/event")
					b.ReportMetric(float64(r.cpu.Microseconds())/float64(followers*r.events), "cpu-µs/follower/event")
					b.ReportMetric(float64(r.heap)/float64(followers)/1024, "heap-KiB/follower")
					b.Logf("%s, %d followers: %d events of %d B on average, fan-out latency p50 %.2f ms p99 %.2f ms max %.2f ms, run %v, cpu %v (%.2f µs per follower per event), heap %.1f KiB per follower",
						mode, followers, r.events, r.bytes/int64(r.events), r.p50.Seconds()*1000, r.p99.Seconds()*1000, r.max.Seconds()*1000, r.wall, r.cpu,
						float64(r.cpu.Microseconds())/float64(followers*r.events), float64(r.heap)/float64(followers)/1024)
				}
			}
		})
	}
}

type fanoutResult struct {
	events        int
	bytes         int64
	p50, p99, max time.Duration
	wall, cpu     time.Duration
	heap          int64
}

// fanoutRun opens a room on servers[0], connects followers round-robin
// across the servers, runs tokens tokens and checks every follower got
// every event in order.
func fanoutRun(b *testing.B, servers []*Server, tss []*httptest.Server, followers, tokens int) fanoutResult {
	b.Helper()
	var mu sync.Mutex
	var pubTimes []time.Time
	owner := servers[0].rooms
	owner.published = func(_ string, _ int64, typ string) {
		if typ == MsgEvent {
			mu.Lock()
			pubTimes = append(pubTimes, time.Now())
			mu.Unlock()
		}
	}
	defer func() { owner.published = nil }()
	p, _, err := websocket.DefaultDialer.Dial(wsURL(tss[0], "/ws"), nil)
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	read := func(c *websocket.Conn, typ string) []byte {
		for {
			c.SetReadDeadline(time.Now().Add(60 * time.Second))
			_, msg, err := c.ReadMessage()
			if err != nil {
				b.Fatalf("waiting for %s: %v", typ, err)
			}
			if bytes.HasPrefix(msg, []byte(`{"type":"`+typ+`"`)) {
				return msg
			}
		}
	}
	p.WriteJSON(map[string]any{"type": "room_open", "payload": map[string]any{"page": "/lab"}})
	var op struct {
		Payload struct{ Code string } `json:"payload"`
	}
	json.Unmarshal(read(p, MsgRoomOpened), &op)
	heap0 := heapInUse()
	type recv struct {
		times []time.Time
		err   error
	}
	got := make([]recv, followers)
	conns := make([]*websocket.Conn, followers)
	for i := range followers {
		c, _, err := websocket.DefaultDialer.Dial(wsURL(tss[i%len(tss)], "/ws/room?code="+op.Payload.Code), nil)
		if err != nil {
			b.Fatal(err)
		}
		conns[i] = c
		read(c, MsgRoomJoined)
	}
	heap1 := heapInUse()
	start := map[string]any{"prompt": "The President said", "max_new_tokens": tokens, "sampling": map[string]any{"temperature": 1, "seed": 1}}
	var wg sync.WaitGroup
	var total int64
	for i, c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var last int64 = -1
			for {
				c.SetReadDeadline(time.Now().Add(60 * time.Second))
				_, msg, err := c.ReadMessage()
				if err != nil {
					got[i].err = err
					return
				}
				now := time.Now()
				if !bytes.HasPrefix(msg, []byte(`{"type":"event"`)) {
					continue
				}
				// the event's own seq comes first in its payload: strictly increasing
				k := bytes.Index(msg, []byte(`"payload":{"seq":`))
				if k < 0 {
					got[i].err = fmt.Errorf("event without seq")
					return
				}
				var seq int64
				for _, d := range msg[k+17:] {
					if d < '0' || d > '9' {
						break
					}
					seq = seq*10 + int64(d-'0')
				}
				if seq != last+1 && last >= 0 {
					got[i].err = fmt.Errorf("event %d after %d", seq, last)
					return
				}
				last = seq
				got[i].times = append(got[i].times, now)
				if i == 0 {
					mu.Lock()
					total += int64(len(msg))
					mu.Unlock()
				}
				if bytes.Contains(msg[:min(len(msg), 128)], []byte(`"stage":"stop"`)) {
					return
				}
			}
		}()
	}
	cpu0, t0 := cpuTime(), time.Now()
	p.WriteJSON(map[string]any{"type": "start", "payload": start})
	read(p, MsgStarted)
	p.WriteJSON(map[string]any{"type": "run"})
	for {
		msg := read(p, MsgEvent)
		if bytes.Contains(msg[:min(len(msg), 128)], []byte(`"stage":"stop"`)) {
			break
		}
	}
	wg.Wait()
	wall, cpu := time.Since(t0), cpuTime()-cpu0
	mu.Lock()
	defer mu.Unlock()
	r := fanoutResult{events: len(pubTimes), wall: wall, cpu: cpu, bytes: total, heap: int64(heap1) - int64(heap0)}
	var lat []time.Duration
	for j, pt := range pubTimes {
		var worst time.Duration
		for i := range got {
			if got[i].err != nil || len(got[i].times) != len(pubTimes) {
				b.Fatalf("follower %d got %d of %d events: %v", i, len(got[i].times), len(pubTimes), got[i].err)
			}
			worst = max(worst, got[i].times[j].Sub(pt))
		}
		lat = append(lat, worst)
	}
	for _, c := range conns {
		c.Close()
	}
	if followers == 0 {
		return r
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	r.p50, r.p99, r.max = lat[len(lat)/2], lat[len(lat)*99/100], lat[len(lat)-1]
	return r
}
