package web

// rooms_bench_test.go: the classroom fan-out benchmark on loopback: one
// presenter on the default model and 200 followers; every follower must
// receive every event in order. The followers run in a separate process
// (this test binary, started again in client mode), so the server's CPU
// and memory are measured apart from the clients'. Two scenarios:
//
//   - run: the presenter runs 200 tokens with "run", the fastest stream the
//     engine produces (the worst case: ~600 events in about a second);
//   - paced: 40 tokens at the lab's fastest playback speed (5 tokens/s,
//     step_token each 200 ms), which is how a class actually watches.
//
// Each scenario alternates the prepared-frame writer (one encoded frame per
// message shared by all followers) with the plain writer (each follower's
// writer frames and copies the message itself, as before), so the ratio
// comes from one run on one machine load. Reported per scenario, as medians
// over rounds: fan-out latency from the room publishing an event to the last
// follower reading it (p50, p99, max over events), the server's CPU per
// follower per event (above the same run without followers), the client
// process's CPU, and the server's heap per follower. With the in-process
// fan-out and with NATS and two replicas (followers split across both).
//
//	go test -run '^$' -bench RoomFanout -benchtime 1x ./web/
//	INFERSCOPE_BENCH_ROUNDS=5 (default 3) sets the rounds.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http/httptest"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
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

// roomClientsEnv starts this test binary as the benchmark's follower
// clients instead of running tests (see TestMain).
const roomClientsEnv = "INFERSCOPE_ROOM_CLIENTS"

func TestMain(m *testing.M) {
	if spec := os.Getenv(roomClientsEnv); spec != "" {
		os.Exit(roomClientsMain(spec))
	}
	os.Exit(m.Run())
}

// clientSpec tells the client process whom to follow.
type clientSpec struct {
	URLs      []string `json:"urls"` // ws://host/ws/room?code=…, followers round-robin
	Followers int      `json:"followers"`
}

// clientReport is the client process's answer: for each event (in order),
// the wall-clock time the last follower read it, and the first follower's
// bytes.
type clientReport struct {
	Last  []int64 `json:"last"`
	Bytes int64   `json:"bytes"`
	Err   string  `json:"err,omitempty"`
}

// roomClientsMain connects the followers, prints "ready", reads every
// follower's events until the run stops, and prints the report as JSON.
func roomClientsMain(specJSON string) int {
	var spec clientSpec
	if err := json.Unmarshal([]byte(specJSON), &spec); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	conns := make([]*websocket.Conn, spec.Followers)
	for i := range conns {
		c, _, err := websocket.DefaultDialer.Dial(spec.URLs[i%len(spec.URLs)], nil)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		c.SetReadDeadline(time.Now().Add(60 * time.Second))
		if _, msg, err := c.ReadMessage(); err != nil || !bytes.HasPrefix(msg, []byte(`{"type":"room_joined"`)) {
			fmt.Fprintf(os.Stderr, "follower %d: %v %.80s\n", i, err, msg)
			return 1
		}
		conns[i] = c
	}
	fmt.Println("ready")
	times := make([][]int64, len(conns))
	errs := make([]error, len(conns))
	var bytesRead int64
	var wg sync.WaitGroup
	for i, c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			last := int64(-1)
			for {
				c.SetReadDeadline(time.Now().Add(120 * time.Second))
				_, msg, err := c.ReadMessage()
				if err != nil {
					errs[i] = err
					return
				}
				now := time.Now().UnixNano()
				if !bytes.HasPrefix(msg, []byte(`{"type":"event"`)) {
					continue
				}
				// the event's own seq comes first in its payload: strictly increasing
				k := bytes.Index(msg, []byte(`"payload":{"seq":`))
				if k < 0 {
					errs[i] = fmt.Errorf("event without seq")
					return
				}
				var seq int64
				for _, d := range msg[k+17:] {
					if d < '0' || d > '9' {
						break
					}
					seq = seq*10 + int64(d-'0')
				}
				if last >= 0 && seq != last+1 {
					errs[i] = fmt.Errorf("event %d after %d", seq, last)
					return
				}
				last = seq
				times[i] = append(times[i], now)
				if i == 0 {
					bytesRead += int64(len(msg))
				}
				if bytes.Contains(msg[:min(len(msg), 128)], []byte(`"stage":"stop"`)) {
					return
				}
			}
		}()
	}
	wg.Wait()
	rep := clientReport{Bytes: bytesRead}
	for i := range conns {
		conns[i].Close()
		if errs[i] != nil || len(times[i]) != len(times[0]) {
			rep.Err = fmt.Sprintf("follower %d got %d events (follower 0: %d): %v", i, len(times[i]), len(times[0]), errs[i])
			break
		}
	}
	if rep.Err == "" {
		rep.Last = make([]int64, len(times[0]))
		for _, ts := range times {
			for j, t := range ts {
				rep.Last[j] = max(rep.Last[j], t)
			}
		}
	}
	json.NewEncoder(os.Stdout).Encode(rep)
	return 0
}

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

func BenchmarkRoomFanout(b *testing.B) {
	m, err := models.Default()
	if err != nil {
		b.Fatal(err)
	}
	rounds := 3
	if n, err := strconv.Atoi(os.Getenv("INFERSCOPE_BENCH_ROUNDS")); err == nil && n > 0 {
		rounds = n
	}
	scenarios := []fanoutScenario{{"run", 200, 0}, {"paced", 40, 200 * time.Millisecond}}
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
			for _, sc := range scenarios {
				b.Run(sc.name, func(b *testing.B) {
					for i := 0; i < b.N; i++ {
						base := fanoutRun(b, servers, tss, 0, sc, false)
						res := map[string][]fanoutResult{}
						for r := range rounds {
							for _, plain := range []bool{false, true} { // interleaved A/B
								name := map[bool]string{false: "prepared", true: "plain"}[plain]
								x := fanoutRun(b, servers, tss, 200, sc, plain)
								x.srvCPUPer = float64((x.cpu - base.cpu).Microseconds()) / float64(200*x.events)
								res[name] = append(res[name], x)
								b.Logf("%s %s round %d %s: %d events of %d B, latency p50 %.1f ms p99 %.1f ms max %.1f ms, server cpu %v (0 followers: %v) = %.2f µs/follower/event, client process cpu %v, heap %.1f KiB/follower, load %s",
									mode, sc.name, r+1, name, x.events, x.bytes/int64(x.events), ms(x.p50), ms(x.p99), ms(x.max), x.cpu, base.cpu, x.srvCPUPer, x.clientCPU, float64(x.heap)/200/1024, x.load)
							}
						}
						p, q := median(res["prepared"]), median(res["plain"])
						b.ReportMetric(p.p50ms, "p50-ms")
						b.ReportMetric(p.p99ms, "p99-ms")
						b.ReportMetric(p.maxms, "max-ms")
						b.ReportMetric(p.srvCPU, "server-cpu-µs/follower/event")
						b.ReportMetric(p.heapKiB, "server-heap-KiB/follower")
						b.ReportMetric(p.clientCPUms, "client-proc-cpu-ms")
						b.ReportMetric(q.p99ms/p.p99ms, "plain/prepared-p99")
						b.ReportMetric(q.srvCPU/p.srvCPU, "plain/prepared-cpu")
						b.Logf("%s %s, medians of %d rounds: prepared p50 %.1f p99 %.1f max %.1f ms, server %.2f µs/follower/event, heap %.1f KiB/follower, clients %.0f ms cpu | plain p50 %.1f p99 %.1f max %.1f ms, server %.2f µs/follower/event, heap %.1f KiB/follower | 0 followers: %d events, server cpu %v",
							mode, sc.name, rounds, p.p50ms, p.p99ms, p.maxms, p.srvCPU, p.heapKiB, p.clientCPUms, q.p50ms, q.p99ms, q.maxms, q.srvCPU, q.heapKiB, base.events, base.cpu)
					}
				})
			}
		})
	}
}

func ms(d time.Duration) float64 { return d.Seconds() * 1000 }

type fanoutMedian struct {
	p50ms, p99ms, maxms, srvCPU, heapKiB, clientCPUms float64
}

func median(rs []fanoutResult) fanoutMedian {
	med := func(f func(fanoutResult) float64) float64 {
		v := make([]float64, len(rs))
		for i, r := range rs {
			v[i] = f(r)
		}
		slices.Sort(v)
		return v[len(v)/2]
	}
	return fanoutMedian{
		p50ms:       med(func(r fanoutResult) float64 { return ms(r.p50) }),
		p99ms:       med(func(r fanoutResult) float64 { return ms(r.p99) }),
		maxms:       med(func(r fanoutResult) float64 { return ms(r.max) }),
		srvCPU:      med(func(r fanoutResult) float64 { return r.srvCPUPer }),
		heapKiB:     med(func(r fanoutResult) float64 { return float64(r.heap) / 200 / 1024 }),
		clientCPUms: med(func(r fanoutResult) float64 { return ms(r.clientCPU) }),
	}
}

type fanoutResult struct {
	events        int
	bytes         int64
	p50, p99, max time.Duration
	wall, cpu     time.Duration // the server process's CPU during the run
	clientCPU     time.Duration // the client process's CPU, whole life
	heap          int64         // the server's heap and stacks for the followers
	srvCPUPer     float64
	load          string
}

// fanoutRun opens a room on servers[0], starts the client process with
// followers round-robin across the servers, drives the run as sc says,
// and checks every follower got every event in order.
func fanoutRun(b *testing.B, servers []*Server, tss []*httptest.Server, followers int, sc fanoutScenario, plain bool) fanoutResult {
	b.Helper()
	var mu sync.Mutex
	var pubTimes []int64
	owner := servers[0].rooms
	for _, s := range servers {
		s.rooms.plainWrites = plain
	}
	owner.published = func(_ string, _ int64, typ string) {
		if typ == MsgEvent {
			t := time.Now().UnixNano()
			mu.Lock()
			pubTimes = append(pubTimes, t)
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
		Payload struct {
			Code string
			Key  string
		} `json:"payload"`
	}
	json.Unmarshal(read(p, MsgRoomOpened), &op)
	defer p.WriteJSON(map[string]any{"type": "room_close", "payload": map[string]any{"code": op.Payload.Code, "key": op.Payload.Key}})

	// the last round's followers must be gone, or their memory counts against this one's
	for end := time.Now().Add(10 * time.Second); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		n := int64(0)
		for _, s := range servers {
			n += s.rooms.followers.Load()
		}
		if n == 0 {
			break
		}
	}
	heap0 := heapInUse()
	var cmd *exec.Cmd
	var out *bufio.Reader
	if followers > 0 {
		spec := clientSpec{Followers: followers}
		for _, ts := range tss {
			spec.URLs = append(spec.URLs, wsURL(ts, "/ws/room?code="+op.Payload.Code))
		}
		sj, _ := json.Marshal(spec)
		cmd = exec.Command(os.Args[0])
		cmd.Env = append(os.Environ(), roomClientsEnv+"="+string(sj))
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
	heap1 := heapInUse()
	start := map[string]any{"prompt": "The President said", "max_new_tokens": sc.tokens, "sampling": map[string]any{"temperature": 1, "seed": 1}}
	cpu0, t0 := cpuTime(), time.Now()
	p.WriteJSON(map[string]any{"type": "start", "payload": start})
	read(p, MsgStarted)
	stopped := func(msg []byte) bool { return bytes.Contains(msg[:min(len(msg), 128)], []byte(`"stage":"stop"`)) }
	if sc.pace == 0 {
		p.WriteJSON(map[string]any{"type": "run"})
		for !stopped(read(p, MsgEvent)) {
		}
	} else {
		// step_token at the lab's playback speed: a token, then wait out the rest of the interval
	tokens:
		for {
			next := time.Now().Add(sc.pace)
			p.WriteJSON(map[string]any{"type": "step_token"})
			for {
				msg := read(p, MsgEvent)
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
		if rep.Err != "" {
			b.Fatal(rep.Err)
		}
		clientCPU = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	}
	wall, cpu := time.Since(t0), cpuTime()-cpu0
	mu.Lock()
	defer mu.Unlock()
	r := fanoutResult{events: len(pubTimes), wall: wall, cpu: cpu, clientCPU: clientCPU, bytes: rep.Bytes, heap: int64(heap1) - int64(heap0), load: loadAvg()}
	if followers == 0 {
		return r
	}
	if len(rep.Last) != len(pubTimes) {
		b.Fatalf("followers got %d events, the room published %d", len(rep.Last), len(pubTimes))
	}
	lat := make([]time.Duration, len(pubTimes))
	for j, pt := range pubTimes {
		lat[j] = time.Duration(rep.Last[j] - pt)
	}
	slices.Sort(lat)
	r.p50, r.p99, r.max = lat[len(lat)/2], lat[len(lat)*99/100], lat[len(lat)-1]
	return r
}
