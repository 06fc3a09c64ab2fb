package web

// rooms_bench_test.go: the classroom fan-out benchmark on loopback: one
// presenter on the default model and 200 followers; every follower must
// receive every event in order. The followers run in a separate process
// (this test binary, started again in client mode), so the server's CPU
// and memory are measured apart from the clients'. The client process does
// as little as it can per message: it reads raw websocket frames (no
// library), looks only at the message's type, the event's seq and stage in
// its first bytes, and skips the rest. Two scenarios:
//
//   - paced: 60 tokens at the lab's fastest playback speed (5 tokens/s,
//     step_token each 200 ms), which is how a class actually watches;
//   - run: the presenter runs 200 tokens with "run {detail_ms: 250}", as
//     the lab's "Run to end" at engine speed asks: the fastest stream the
//     engine produces (the worst case: ~600 events in about a second).
//
// Each scenario alternates arms in the same process, round by round, so
// the ratios come from one run on one machine load:
//
//   - thinned: this server. A presented run is thinned as the lab thins
//     a private one (thin.go): thin events in groups, a token in full at
//     most every 250 ms, the detail before the stop. Prepared frames (one
//     encoded frame per message shared by all followers, queued frames
//     batched into one writev).
//   - thinned, deflate: the same, read by clients that negotiate
//     permessage-deflate, as browsers do: large messages go compressed,
//     compressed once per replica (fanout_deflate.go).
//   - full: the room gets every event of the run in full, as rooms did
//     before runs were thinned (roomHub.fullRuns: main's behaviour), with
//     the same prepared frames.
//   - with INFERSCOPE_BENCH_ARMS=all also: plain (each follower's writer
//     frames and copies the message itself with gorilla's WriteMessage)
//     and gorilla clients (the thinned server read by clients that use
//     gorilla's ReadMessage, a new buffer per message).
//
// Stepping (paced) sends every event in full in every arm. Latency is per
// run message (event, events, detail), from the room publishing it (the
// presenter's connection has just encoded it) to the last follower in the
// client process having read it whole, split by the server's trace
// (roomHub.trace) into "queued" (every follower's queue on every replica
// holds it) and "written" (the last follower's writer has written it).
// Reported: p50/p99/max over all rounds' messages, the bytes each
// follower read for the run, the server's CPU per follower per event of
// the run (above the same arm's run without followers), the client
// process's CPU, and the server's heap and RSS per follower. With the
// in-process fan-out and with NATS and two replicas (followers split
// across both).
//
//	go test -run '^$' -bench RoomFanout -benchtime 1x ./web/

import (
	"bufio"
	"bytes"
	"compress/flate"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	natsserver "github.com/nats-io/nats-server/v2/server"

	"github.com/inferscope/inferscope/engine"
	"github.com/inferscope/inferscope/internal/cputime"
	"github.com/inferscope/inferscope/internal/wsraw"
	"github.com/inferscope/inferscope/models"
	"github.com/inferscope/inferscope/web/catalog"
	"github.com/inferscope/inferscope/web/room"
	"github.com/inferscope/inferscope/web/wire"
)

// roomClientsEnv starts this test binary as the benchmark's follower
// clients instead of running tests (see TestMain).
const roomClientsEnv = "INFERSCOPE_ROOM_CLIENTS"

// clientSpec tells the client process whom to follow.
type clientSpec struct {
	URLs      []string `json:"urls"` // ws://host/ws/room?code=…, followers round-robin
	Followers int      `json:"followers"`
	// Gorilla reads each message whole with gorilla's ReadMessage (a new
	// buffer per message), as the benchmark's clients did before: the
	// client-bound figure, for comparison
	Gorilla bool `json:"gorilla,omitempty"`
	// Deflate negotiates permessage-deflate, as browsers do, and inflates
	// the compressed messages
	Deflate bool `json:"deflate,omitempty"`
}

// clientReport is the client process's answer: for each run message (in
// order), the wall-clock times the first and the last follower had read it
// whole, the first follower's bytes of run messages and the run's events.
type clientReport struct {
	First      []int64 `json:"first"`
	Last       []int64 `json:"last"`
	Bytes      int64   `json:"bytes"`
	Events     int     `json:"events"`
	GOMAXPROCS int     `json:"gomaxprocs"`
	NumGC      uint32  `json:"num_gc"`
	Err        string  `json:"err,omitempty"`
}

// rawFollower is a follower socket read frame by frame with no websocket
// library: the client process does as little as it can per frame (read
// the header, look at the first bytes of the message, skip the rest), so
// the latency it measures is the server's and the kernel's, not a
// client's JSON decoding.
type rawFollower struct {
	c    net.Conn
	br   *bufio.Reader
	head []byte
	// whole, when the message starts with it (an events message), is read
	// whole into body instead of skipped: the client checks every event's seq
	whole []byte
	body  []byte
	z     []byte        // a compressed message as read
	fr    io.ReadCloser // its inflater
	size  int           // the last message's length
	hdr   [8]byte
	ws    *websocket.Conn // set: read with gorilla instead (clientSpec.Gorilla)
}

func dialGorilla(ws string) (*rawFollower, error) {
	c, _, err := websocket.DefaultDialer.Dial(ws, nil)
	if err != nil {
		return nil, err
	}
	return &rawFollower{c: c.NetConn(), ws: c}, nil
}

var eventsPrefix = []byte(`{"type":"events"`)

// runMsg reads a run message's events from its first bytes (an event: its
// seq and whether it is the stop) or, for an events message, from the whole
// message (each event's seq, which comes first in the event); ok is false
// for any other message. A detail message carries no new events.
func runMsg(head, body []byte) (seqs []int64, stop, ok bool) {
	switch {
	case bytes.HasPrefix(head, []byte(`{"type":"detail"`)):
		return nil, false, true
	case bytes.HasPrefix(head, eventsPrefix):
		const k = `{"seq":`
		for i := bytes.Index(body, []byte(k)); i >= 0; {
			var seq int64
			j := i + len(k)
			for ; j < len(body) && body[j] >= '0' && body[j] <= '9'; j++ {
				seq = seq*10 + int64(body[j]-'0')
			}
			if bytes.HasPrefix(body[j:], []byte(`,"stage":"`)) {
				seqs = append(seqs, seq)
			}
			n := bytes.Index(body[j:], []byte(k))
			if n < 0 {
				break
			}
			i = j + n
		}
		return seqs, false, len(seqs) > 0
	}
	seq, stop, ok := eventSeq(head)
	if !ok {
		return nil, false, false
	}
	return []int64{seq}, stop, true
}

// dialRaw opens a websocket by hand (RFC 6455 §4.1): the upgrade request,
// then the 101 answer; the frames follow on the same buffered reader.
func dialRaw(ws string, deflate bool) (*rawFollower, error) {
	u, err := url.Parse(ws)
	if err != nil {
		return nil, err
	}
	c, err := net.Dial("tcp", u.Host)
	if err != nil {
		return nil, err
	}
	ext := ""
	if deflate {
		ext = "Sec-WebSocket-Extensions: permessage-deflate; client_max_window_bits\r\n"
	}
	br, resp, err := wsraw.Upgrade(c, u, ext, 32<<10)
	if err != nil {
		return nil, err
	}
	if deflate && !strings.Contains(resp.Header.Get("Sec-WebSocket-Extensions"), "permessage-deflate") {
		c.Close()
		return nil, errors.New("the server did not negotiate permessage-deflate")
	}
	return &rawFollower{c: c, br: br, head: make([]byte, 0, 192)}, nil
}

// next reads one whole message and returns its first bytes (valid until
// the next call). Pings are answered; a close frame is io.EOF.
func (r *rawFollower) next() ([]byte, error) {
	if r.ws != nil {
		_, msg, err := r.ws.ReadMessage()
		r.size, r.body = len(msg), msg
		return msg[:min(len(msg), 192)], err
	}
	r.head, r.size = r.head[:0], 0
	inMsg, compressed := false, false
	for {
		if _, err := io.ReadFull(r.br, r.hdr[:2]); err != nil {
			return nil, err
		}
		fin, rsv1, op, n := r.hdr[0]&0x80 != 0, r.hdr[0]&0x40 != 0, r.hdr[0]&0x0f, int(r.hdr[1]&0x7f)
		if r.hdr[1]&0x80 != 0 {
			return nil, errors.New("masked frame from the server")
		}
		switch n {
		case 126:
			if _, err := io.ReadFull(r.br, r.hdr[:2]); err != nil {
				return nil, err
			}
			n = int(binary.BigEndian.Uint16(r.hdr[:2]))
		case 127:
			if _, err := io.ReadFull(r.br, r.hdr[:8]); err != nil {
				return nil, err
			}
			n = int(binary.BigEndian.Uint64(r.hdr[:8]))
		}
		if op >= 8 { // control: close, ping, pong
			p := make([]byte, n)
			if _, err := io.ReadFull(r.br, p); err != nil {
				return nil, err
			}
			switch op {
			case 8:
				return nil, io.EOF
			case 9: // pong with a zero mask: the payload as it is
				r.c.Write(append([]byte{0x8a, 0x80 | byte(n), 0, 0, 0, 0}, p...))
			}
			continue
		}
		if (op == 0) != inMsg {
			return nil, fmt.Errorf("unexpected frame opcode %d", op)
		}
		if !inMsg {
			compressed = rsv1
			r.body, r.z = r.body[:0], r.z[:0]
			inMsg = true
			if !compressed {
				p, err := r.br.Peek(min(n, cap(r.head)))
				if err != nil {
					return nil, err
				}
				r.head = append(r.head, p...)
			}
		}
		r.size += n
		if compressed {
			// a compressed message is read whole and inflated (RFC 7692 §7.2.2)
			k := len(r.z)
			r.z = slices.Grow(r.z, n)[:k+n]
			if _, err := io.ReadFull(r.br, r.z[k:]); err != nil {
				return nil, err
			}
			if !fin {
				continue
			}
			if err := r.inflate(); err != nil {
				return nil, err
			}
			r.head = append(r.head, r.body[:min(len(r.body), cap(r.head))]...)
			return r.head, nil
		}
		if r.whole != nil && bytes.HasPrefix(r.head, r.whole) {
			k := len(r.body)
			r.body = slices.Grow(r.body, n)[:k+n]
			if _, err := io.ReadFull(r.br, r.body[k:]); err != nil {
				return nil, err
			}
		} else if _, err := r.br.Discard(n); err != nil {
			return nil, err
		}
		if fin {
			return r.head, nil
		}
	}
}

var deflateTail = []byte{0, 0, 0xff, 0xff}

// inflate decompresses the message in r.z into r.body.
func (r *rawFollower) inflate() error {
	src := io.MultiReader(bytes.NewReader(r.z), bytes.NewReader(deflateTail))
	if r.fr == nil {
		r.fr = flate.NewReader(src)
	} else {
		r.fr.(flate.Resetter).Reset(src, nil)
	}
	buf := bytes.NewBuffer(r.body[:0])
	_, err := buf.ReadFrom(r.fr)
	r.body = buf.Bytes()
	if err == io.ErrUnexpectedEOF { // the message ends without a final block
		err = nil
	}
	return err
}

// eventSeq returns an event message's own seq (it comes first in the
// payload) and whether it is the stop event; ok is false for any other
// message.
func eventSeq(head []byte) (seq int64, stop, ok bool) {
	if !bytes.HasPrefix(head, []byte(`{"type":"event"`)) {
		return 0, false, false
	}
	k := bytes.Index(head, []byte(`"payload":{"seq":`))
	if k < 0 {
		return 0, false, false
	}
	for _, d := range head[k+17:] {
		if d < '0' || d > '9' {
			break
		}
		seq = seq*10 + int64(d-'0')
	}
	return seq, bytes.Contains(head, []byte(`"stage":"stop"`)), true
}

// roomClientsMain connects the followers, prints "ready", reads every
// follower's events until the run stops, and prints the report as JSON.
func roomClientsMain(specJSON string) int {
	var spec clientSpec
	if err := json.Unmarshal([]byte(specJSON), &spec); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	conns := make([]*rawFollower, spec.Followers)
	for i := range conns {
		dial := func(u string) (*rawFollower, error) { return dialRaw(u, spec.Deflate) }
		if spec.Gorilla {
			dial = dialGorilla
		}
		c, err := dial(spec.URLs[i%len(spec.URLs)])
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		c.whole = eventsPrefix
		c.c.SetReadDeadline(time.Now().Add(60 * time.Second))
		if msg, err := c.next(); err != nil || !bytes.HasPrefix(msg, []byte(`{"type":"room_joined"`)) {
			fmt.Fprintf(os.Stderr, "follower %d: %v %.80s\n", i, err, msg)
			return 1
		}
		c.c.SetReadDeadline(time.Time{})
		conns[i] = c
	}
	fmt.Println("ready")
	times := make([][]int64, len(conns))
	errs := make([]error, len(conns))
	var bytesRead int64
	events := 0
	var wg sync.WaitGroup
	for i, c := range conns {
		times[i] = make([]int64, 0, 1024)
		wg.Add(1)
		go func() {
			defer wg.Done()
			last := int64(-1)
			c.c.SetReadDeadline(time.Now().Add(10 * time.Minute))
			for {
				head, err := c.next()
				if err != nil {
					errs[i] = err
					return
				}
				now := time.Now().UnixNano()
				seqs, stop, ok := runMsg(head, c.body)
				if !ok {
					continue
				}
				for _, seq := range seqs {
					if last >= 0 && seq != last+1 {
						errs[i] = fmt.Errorf("event %d after %d", seq, last)
						return
					}
					last = seq
				}
				times[i] = append(times[i], now)
				if i == 0 {
					bytesRead += int64(c.size)
					events += len(seqs)
				}
				if stop {
					return
				}
			}
		}()
	}
	wg.Wait()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	rep := clientReport{Bytes: bytesRead, Events: events, GOMAXPROCS: runtime.GOMAXPROCS(0), NumGC: ms.NumGC}
	for i := range conns {
		conns[i].c.Close()
		if errs[i] != nil || len(times[i]) != len(times[0]) {
			rep.Err = fmt.Sprintf("follower %d got %d events (follower 0: %d): %v", i, len(times[i]), len(times[0]), errs[i])
			break
		}
	}
	if rep.Err == "" {
		rep.First = slices.Clone(times[0])
		rep.Last = slices.Clone(times[0])
		for _, ts := range times {
			for j, t := range ts {
				rep.First[j] = min(rep.First[j], t)
				rep.Last[j] = max(rep.Last[j], t)
			}
		}
	}
	json.NewEncoder(os.Stdout).Encode(rep)
	return 0
}

func benchServer(b *testing.B, m *engine.Model, f room.Fanout) (*Server, *httptest.Server) {
	cat := catalog.NewEngineCatalog()
	if err := cat.Add(m, "", true); err != nil {
		b.Fatal(err)
	}
	srv, err := New(Options{Catalog: cat, Rooms: room.RoomOptions{Fanout: f, MaxFollowers: 1000, MaxFollowersPerVisitor: 1000}})
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

// liveMem is the live heap (objects reachable after a collection) and
// the memory of goroutine stacks. Freed stacks stay cached in the runtime,
// so a second set of followers reuses the first's: only the first round of
// a process measures stacks fresh.
func liveMem() (heap, stacks int64) {
	runtime.GC()
	runtime.GC() // and what sync.Pools held (their victim caches)
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc), int64(ms.StackInuse)
}

// rss is the process's resident memory in bytes (/proc/self/statm).
func rss() int64 {
	b, _ := os.ReadFile("/proc/self/statm")
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return 0
	}
	n, _ := strconv.ParseInt(f[1], 10, 64)
	return n * int64(os.Getpagesize())
}

func loadAvg() string {
	b, _ := os.ReadFile("/proc/loadavg")
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

// fanoutScenario is how the presenter drives the run.
type fanoutScenario struct {
	name   string
	tokens int
	pace   time.Duration // 0: one "run"; else step_token every pace
}

// BenchmarkRoomFanout: see the top of the file. Environment:
//
//	INFERSCOPE_BENCH_ROUNDS        rounds of the A/B (default 3)
//	INFERSCOPE_BENCH_TOKENS        tokens of the paced scenario (default 60)
//	INFERSCOPE_BENCH_CLIENT_PROCS  GOMAXPROCS of the client process (default: all cores)
//
// The server process's GOMAXPROCS is go test's -cpu.
func BenchmarkRoomFanout(b *testing.B) {
	m, err := models.Default()
	if err != nil {
		b.Fatal(err)
	}
	rounds, tokens := 3, 60
	if n, err := strconv.Atoi(os.Getenv("INFERSCOPE_BENCH_ROUNDS")); err == nil && n > 0 {
		rounds = n
	}
	if n, err := strconv.Atoi(os.Getenv("INFERSCOPE_BENCH_TOKENS")); err == nil && n > 0 {
		tokens = n
	}
	const followers = 200
	scenarios := []fanoutScenario{{"paced", tokens, 200 * time.Millisecond}, {"run", 200, 0}}
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
					f, err := room.NewNATSFanout(ns.ClientURL())
					if err != nil {
						b.Fatal(err)
					}
					b.Cleanup(func() { f.Close() })
					s, ts := benchServer(b, m, f)
					servers, tss = append(servers, s), append(tss, ts)
				}
			}
			for _, sc := range scenarios {
				b.Run(sc.name, func(b *testing.B) {
					for i := 0; i < b.N; i++ {
						arms := fanoutVariants()
						base := map[string]fanoutResult{}
						for _, v := range arms {
							base[v.name] = fanoutRun(b, servers, tss, 0, sc, v)
						}
						res := map[string][]fanoutResult{}
						drops := map[string]int{}
						for r := range rounds {
							for _, v := range arms { // interleaved
								x := fanoutRun(b, servers, tss, followers, sc, v)
								if x.dropped != "" {
									benchLog("%s %s round %d %s: not measured, a follower was dropped (its queue of 256 messages was full): %s; load %s", mode, sc.name, r+1, v.name, x.dropped, x.load)
									drops[v.name]++
									continue
								}
								x.srvCPUPer = float64((x.cpu - base[v.name].cpu).Microseconds()) / float64(followers*x.events)
								x.allocsPer = (float64(x.mallocs) - float64(base[v.name].mallocs)) / float64(followers*x.events)
								res[v.name] = append(res[v.name], x)
								benchLog("%s %s round %d %s: %s", mode, sc.name, r+1, v.name, x.line(followers))
							}
						}
						sum := map[string]fanoutSummary{}
						for _, v := range arms {
							sum[v.name] = summarize(res[v.name], followers)
						}
						p, q := sum["thinned"], sum["full"]
						b.ReportMetric(p.lat.p50, "p50-ms")
						b.ReportMetric(p.lat.p99, "p99-ms")
						b.ReportMetric(p.lat.max, "max-ms")
						b.ReportMetric(p.bytesKiB, "KiB/follower/run")
						b.ReportMetric(p.srvCPU, "server-cpu-µs/follower/event")
						b.ReportMetric(p.heapKiB, "server-heap-KiB/follower")
						b.ReportMetric(q.lat.p99/p.lat.p99, "full/thinned-p99")
						b.ReportMetric(q.srvCPU/p.srvCPU, "full/thinned-cpu")
						b.ReportMetric(q.bytesKiB/p.bytesKiB, "full/thinned-bytes")
						b.ReportMetric(sum["thinned, deflate"].lat.p99, "deflate-p99-ms")
						b.ReportMetric(sum["thinned, deflate"].bytesKiB, "deflate-KiB/follower/run")
						benchLog("%s %s, %d rounds (latency: all rounds' run messages pooled; stacks: the first round, before the runtime caches freed stacks; the rest: medians of rounds)", mode, sc.name, rounds)
						for _, v := range arms {
							benchLog("  %-26s %s\n  %-26s 0 followers: %d messages, server cpu %v", v.name+":", sum[v.name], "", base[v.name].msgs, base[v.name].cpu)
						}
						z := sum["thinned, deflate"]
						benchLog("  p99 per round: thinned %v, thinned with deflate %v, full %v (%d rounds not measured: a follower dropped); full/thinned: p99 %.2f, server cpu %.2f, bytes %.2f; thinned/deflate: p99 %.2f, server cpu %.2f, bytes %.2f",
							roundP99(res["thinned"]), roundP99(res["thinned, deflate"]), roundP99(res["full"]), drops["full"], q.lat.p99/p.lat.p99, q.srvCPU/p.srvCPU, q.bytesKiB/p.bytesKiB,
							p.lat.p99/z.lat.p99, p.srvCPU/z.srvCPU, p.bytesKiB/z.bytesKiB)
					}
				})
			}
		})
	}
}

// benchLog prints a line of the report as it comes (go test keeps only the
// first lines of a benchmark's log).
func benchLog(format string, args ...any) { fmt.Printf(format+"\n", args...) }

// fanoutVariant is one arm of the interleaved comparison.
type fanoutVariant struct {
	name    string
	full    bool // the room gets a run's every event in full (roomHub.fullRuns: before runs were thinned)
	plain   bool // the server's followers write with gorilla's WriteMessage
	gorilla bool // the client process reads with gorilla's ReadMessage
	deflate bool // the clients negotiate permessage-deflate, as browsers do
}

// fanoutVariants are the arms; INFERSCOPE_BENCH_ARMS=all adds the writer
// and client baselines of the earlier sessions.
func fanoutVariants() []fanoutVariant {
	v := []fanoutVariant{{name: "thinned"}, {name: "thinned, deflate", deflate: true}, {name: "full", full: true}}
	if os.Getenv("INFERSCOPE_BENCH_ARMS") == "all" {
		v = append(v, fanoutVariant{name: "plain", plain: true}, fanoutVariant{name: "thinned, gorilla clients", gorilla: true})
	}
	return v
}

func ms(d time.Duration) float64 { return d.Seconds() * 1000 }

// pcts are percentiles in milliseconds.
type pcts struct{ p50, p99, max float64 }

func percentiles(v []time.Duration) pcts {
	if len(v) == 0 {
		return pcts{}
	}
	v = slices.Clone(v)
	slices.Sort(v)
	return pcts{ms(v[len(v)/2]), ms(v[len(v)*99/100]), ms(v[len(v)-1])}
}

func (p pcts) String() string {
	return fmt.Sprintf("p50 %.1f p99 %.1f max %.1f ms", p.p50, p.p99, p.max)
}

// fanoutResult is one run. The latencies are per event, from the room
// publishing it (the presenter's connection has just encoded it) to: every
// follower's queue on every replica holding it (queued), the last
// follower's writer having written it to its socket (written), the first
// and the last follower in the client process having read it whole.
type fanoutResult struct {
	events                int   // the run's events
	msgs                  int   // the run's messages (event, events, detail)
	bytes                 int64 // what one follower read of the run's messages
	queued, written       []time.Duration
	first, last           []time.Duration
	wall, cpu             time.Duration // the server process's CPU during the run
	clientCPU             time.Duration // the client process's CPU, whole life
	clientProcs, clientGC int
	heap, stacks, rss     int64 // the server's live heap, goroutine stacks and resident memory for the followers
	gc                    uint32
	mallocs               uint64 // the server's heap allocations during the run
	allocsPer             float64
	gcPause               time.Duration
	srvCPUPer             float64
	load                  string
	dropped               string // why a follower did not get every message (the full arm only)
}

func (x fanoutResult) line(followers int) string {
	return fmt.Sprintf("%d events in %d messages, %.1f KiB per follower, in %.2f s; to the last follower %s (queued %s, written %s, first read p50 %.1f ms); server cpu %v = %.2f µs/follower/event, %.2f allocations/follower/event, %d GCs (%v paused); client process (GOMAXPROCS %d) cpu %v = %.2f µs/follower/event, %d GCs; heap %.1f KiB/follower, stacks %.1f KiB/follower, RSS %.1f KiB/follower; load %s",
		x.events, x.msgs, float64(x.bytes)/1024, x.wall.Seconds(), percentiles(x.last), percentiles(x.queued), percentiles(x.written), percentiles(x.first).p50,
		x.cpu, x.srvCPUPer, x.allocsPer, x.gc, x.gcPause, x.clientProcs, x.clientCPU, float64(x.clientCPU.Microseconds())/float64(followers*max(1, x.events)), x.clientGC,
		float64(x.heap)/float64(followers)/1024, float64(x.stacks)/float64(followers)/1024, float64(x.rss)/float64(followers)/1024, x.load)
}

type fanoutSummary struct {
	bytesKiB                float64 // what one follower read of the run, median of rounds
	lat, queued, written    pcts
	srvCPU, cliCPU, heapKiB float64
	stacksKiB               float64
	allocs                  float64
	events                  int
}

func (s fanoutSummary) String() string {
	return fmt.Sprintf("%.1f KiB/follower/run; last follower %s (queued %s, written %s); server %.2f µs/follower/event, %.2f allocations/follower/event, heap %.1f KiB/follower + stacks %.1f KiB/follower; clients %.2f µs/follower/event",
		s.bytesKiB, s.lat, s.queued, s.written, s.srvCPU, s.allocs, s.heapKiB, s.stacksKiB, s.cliCPU)
}

func summarize(rs []fanoutResult, followers int) fanoutSummary {
	if len(rs) == 0 {
		return fanoutSummary{}
	}
	med := func(f func(fanoutResult) float64) float64 {
		v := make([]float64, len(rs))
		for i, r := range rs {
			v[i] = f(r)
		}
		slices.Sort(v)
		return v[len(v)/2]
	}
	var last, queued, written []time.Duration
	for _, r := range rs {
		last, queued, written = append(last, r.last...), append(queued, r.queued...), append(written, r.written...)
	}
	return fanoutSummary{
		lat: percentiles(last), queued: percentiles(queued), written: percentiles(written),
		bytesKiB: med(func(r fanoutResult) float64 { return float64(r.bytes) / 1024 }),
		srvCPU:   med(func(r fanoutResult) float64 { return r.srvCPUPer }),
		allocs:   med(func(r fanoutResult) float64 { return r.allocsPer }),
		cliCPU:   med(func(r fanoutResult) float64 { return float64(r.clientCPU.Microseconds()) / float64(followers*r.events) }),
		heapKiB:  med(func(r fanoutResult) float64 { return float64(r.heap) / float64(followers) / 1024 }),
		// stacks: the largest, the round that did not reuse cached stacks
		stacksKiB: slices.Max(func() []float64 {
			v := []float64{}
			for _, r := range rs {
				v = append(v, float64(r.stacks)/float64(followers)/1024)
			}
			return v
		}()),
		events: len(last),
	}
}

// roundP99 is each round's p99 to the last follower, in milliseconds.
func roundP99(rs []fanoutResult) []int {
	var out []int
	for _, r := range rs {
		out = append(out, int(percentiles(r.last).p99+0.5))
	}
	return out
}

// isRunMsg says whether a room message is part of a run's stream.
func isRunMsg(typ string) bool {
	return typ == wire.MsgEvent || typ == wire.MsgEvents || typ == wire.MsgDetail
}

// fanoutRun opens a room on servers[0], starts the client process with
// followers round-robin across the servers, drives the run as sc says,
// and checks every follower got every event in order.
func fanoutRun(b *testing.B, servers []*Server, tss []*httptest.Server, followers int, sc fanoutScenario, v fanoutVariant) fanoutResult {
	b.Helper()
	var mu sync.Mutex
	pub := map[int64]int64{} // stream seq → when published
	types := map[int64]string{}
	var traces []*room.FanTrace
	owner := servers[0].rooms
	trace := func(t *room.FanTrace) {
		if isRunMsg(t.Type) {
			mu.Lock()
			traces = append(traces, t)
			mu.Unlock()
		}
	}
	published := func(_ string, seq int64, typ string) {
		if isRunMsg(typ) {
			t := time.Now().UnixNano()
			mu.Lock()
			pub[seq], types[seq] = t, typ
			mu.Unlock()
		}
	}
	for _, s := range servers {
		s.rooms.SetProbes(v.plain, v.full, trace, nil)
	}
	owner.SetProbes(v.plain, v.full, trace, published)
	defer func() {
		for _, s := range servers {
			s.rooms.SetProbes(false, false, nil, nil)
		}
	}()
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
		Payload struct {
			Code string
			Key  string
		} `json:"payload"`
	}
	json.Unmarshal(read(p, wire.MsgRoomOpened), &op)
	defer p.WriteJSON(map[string]any{"type": "room_close", "payload": map[string]any{"code": op.Payload.Code, "key": op.Payload.Key}})

	// the last round's followers, views and presenter must be gone, or
	// their memory counts against this one's
	for end := time.Now().Add(10 * time.Second); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		busy := servers[0].metrics.Sessions.Load() != 1
		for _, s := range servers {
			busy = busy || !s.rooms.Idle() || (s != servers[0] && s.metrics.Sessions.Load() != 0)
		}
		if !busy {
			break
		}
	}
	// ...and the last round's room and views are released only within a
	// second or two after that (without this pause the run scenario's
	// heap per follower came out negative: the previous run's events were
	// still live when measuring before, freed by the time of measuring after)
	time.Sleep(2 * time.Second)
	heap0, stacks0 := liveMem()
	rss0 := rss()
	var cmd *exec.Cmd
	var out *bufio.Reader
	if followers > 0 {
		spec := clientSpec{Followers: followers, Gorilla: v.gorilla, Deflate: v.deflate}
		for _, ts := range tss {
			spec.URLs = append(spec.URLs, wsURL(ts, "/ws/room?code="+op.Payload.Code))
		}
		sj, _ := json.Marshal(spec)
		cmd = exec.Command(os.Args[0])
		cmd.Env = append(os.Environ(), roomClientsEnv+"="+string(sj))
		if n := os.Getenv("INFERSCOPE_BENCH_CLIENT_PROCS"); n != "" {
			cmd.Env = append(cmd.Env, "GOMAXPROCS="+n)
		}
		cmd.Stderr = os.Stderr
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			b.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		out = bufio.NewReader(stdout)
		if line, err := out.ReadString('\n'); err != nil || line != "ready\n" {
			cmd.Process.Kill()
			b.Fatalf("client process: %q %v", line, err)
		}
	}
	heap1, stacks1 := liveMem()
	rss1 := rss()
	var ms0, ms1 runtime.MemStats
	runtime.ReadMemStats(&ms0)
	start := map[string]any{"prompt": "The President said", "max_new_tokens": sc.tokens, "sampling": map[string]any{"temperature": 1, "seed": 1}}
	cpu0, t0 := cputime.Process(), time.Now()
	p.WriteJSON(map[string]any{"type": "start", "payload": start})
	read(p, wire.MsgStarted)
	stopped := func(msg []byte) bool { return bytes.Contains(msg[:min(len(msg), 128)], []byte(`"stage":"stop"`)) }
	if sc.pace == 0 {
		p.WriteJSON(map[string]any{"type": "run", "payload": map[string]any{"detail_ms": 250}}) // as the lab's Run to end
		for !stopped(read(p, wire.MsgEvent)) {
		}
	} else {
		// step_token at the lab's playback speed: a token, then wait out the rest of the interval
	tokens:
		for {
			next := time.Now().Add(sc.pace)
			p.WriteJSON(map[string]any{"type": "step_token"})
			for {
				msg := read(p, wire.MsgEvent)
				if stopped(msg) {
					break tokens
				}
				if bytes.Contains(msg[:min(len(msg), 128)], []byte(`"stage":"append"`)) {
					break
				}
			}
			time.Sleep(time.Until(next))
		}
	}
	var rep clientReport
	var clientCPU time.Duration
	if cmd != nil {
		body, _ := io.ReadAll(out)
		werr := cmd.Wait()
		if err := json.Unmarshal(body, &rep); err != nil || werr != nil {
			b.Fatalf("client process: %v %v %s", werr, err, body)
		}
		if rep.Err != "" && v.full {
			// at engine speed in full, a follower on a loaded machine can
			// fall 256 messages behind and be dropped (its page would
			// reconnect): the round is reported, not measured
			return fanoutResult{dropped: rep.Err, load: loadAvg()}
		}
		if rep.Err != "" {
			b.Fatal(rep.Err)
		}
		clientCPU = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	}
	wall, cpu := time.Since(t0), cputime.Process()-cpu0
	runtime.ReadMemStats(&ms1)
	mu.Lock()
	defer mu.Unlock()
	r := fanoutResult{events: rep.Events, msgs: len(pub), wall: wall, cpu: cpu, clientCPU: clientCPU, clientProcs: rep.GOMAXPROCS, clientGC: int(rep.NumGC), bytes: rep.Bytes,
		heap: heap1 - heap0, stacks: stacks1 - stacks0, rss: rss1 - rss0, gc: ms1.NumGC - ms0.NumGC, mallocs: ms1.Mallocs - ms0.Mallocs, gcPause: time.Duration(ms1.PauseTotalNs - ms0.PauseTotalNs), load: loadAvg()}
	if followers == 0 {
		return r
	}
	seqs := slices.Sorted(maps.Keys(pub))
	if len(rep.Last) != len(seqs) {
		b.Fatalf("followers got %d run messages, the room published %d", len(rep.Last), len(seqs))
	}
	queued, written := map[int64]int64{}, map[int64]int64{}
	for _, t := range traces {
		queued[t.Seq] = max(queued[t.Seq], t.Queued)
		written[t.Seq] = max(written[t.Seq], t.Written.Load())
	}
	verbose := os.Getenv("INFERSCOPE_BENCH_VERBOSE") != ""
	for j, seq := range seqs {
		pt := pub[seq]
		r.queued = append(r.queued, time.Duration(queued[seq]-pt))
		r.written = append(r.written, time.Duration(written[seq]-pt))
		r.first = append(r.first, time.Duration(rep.First[j]-pt))
		r.last = append(r.last, time.Duration(rep.Last[j]-pt))
		if verbose {
			benchLog("    message %d (%s): at %.1f ms, queued %.1f, written %.1f, last read %.1f ms", j, types[seq], ms(time.Duration(pt-t0.UnixNano())), ms(r.queued[j]), ms(r.written[j]), ms(r.last[j]))
		}
	}
	return r
}
