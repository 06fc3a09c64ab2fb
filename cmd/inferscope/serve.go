//go:build !engineonly

package main

// serve.go: the serve command: load models into the catalog and run the web server.

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"strings"
	"time"

	"github.com/inferscope/inferscope/engine"
	"github.com/inferscope/inferscope/internal/human"
	"github.com/inferscope/inferscope/web/catalog"
	"github.com/inferscope/inferscope/web/room"
	"github.com/inferscope/inferscope/web/sched"
	"github.com/inferscope/inferscope/web/wire"
	"github.com/inferscope/inferscope/web/ws"

	"github.com/inferscope/inferscope/internal/serve"
	"github.com/inferscope/inferscope/models"
	"github.com/inferscope/inferscope/web"
)

func init() {
	register(&command{name: "serve", summary: "start the web app (the default command)", run: runServe})
}

func runServe(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("serve", "serve [--addr HOST:PORT]", stderr)
	addr := fs.String("addr", "127.0.0.1:8080", "address to listen on; 0.0.0.0 exposes the app to the network")
	var extra multiFlag
	fs.Var(&extra, "model", `extra model to offer (repeatable): a pulled repo id (org/name), a Hugging Face model directory, or a llama2.c .bin; the embedded default is always offered`)
	tokPath := fs.String("tokenizer", "", "tokenizer for a llama2.c --model (default: tokenizer.bin beside it)")
	localOK := fs.Bool("local-models", false, "offer every model in this machine's Ollama and LM Studio stores ($OLLAMA_MODELS or ~/.ollama/models, ~/.lmstudio/models) in the lab's model picker; off by default")
	defaultName := fs.String("default", "", "name of the model the lab starts with (default: the embedded model, or the first --model)")
	quantized := fs.String("quantized", "", "also offer the embedded model quantized at load to these types (comma-separated: bf16, q8_0, q4_0, q4_k), each named NAME-TYPE: the model view shows their blocks beside the original weights")
	var origins multiFlag
	fs.Var(&origins, "allow-origin", "extra websocket origin to accept, e.g. https://class.example.org (repeatable)")
	var hosts multiFlag
	fs.Var(&hosts, "allow-host", "extra Host name to serve, e.g. class.example.org (repeatable); localhost, IP addresses and the --addr host are always served")
	dl := ws.DefaultLimits()
	maxSessions := fs.Int("max-sessions", dl.MaxSessions, "concurrent lab sessions (websocket connections); one more gets \"server full, try again\"")
	readLimit := fs.Int64("read-limit", dl.ReadLimit, "largest websocket message a client may send, bytes")
	rate := fs.Float64("rate", dl.MsgsPerSecond, "websocket messages per second per connection")
	burst := fs.Int("burst", dl.Burst, "websocket message burst per connection")
	maxKV := fs.Int64("max-kv-bytes", dl.MaxKVBytes, "KV cache memory across all sessions, bytes")
	kvCache := fs.String("kv-cache", "f32", "KV cache precision of lab runs: f32, f16 or bf16 (16 bits per key and value: half the cache memory and the bytes attention reads; values rounded once)")
	perVisitor := fs.Int("max-sessions-per-visitor", dl.MaxSessionsPerVisitor, "concurrent sessions of one visitor: one browser (told apart by a cookie the server sets) at one client address")
	perAddress := fs.Int("max-sessions-per-address", 0, "concurrent sessions of all visitors at one client address together, e.g. a class behind one NAT (0: --max-sessions)")
	visitorRate := fs.Int64("visitor-bytes-per-second", dl.VisitorBytesPerSecond, "bytes per second the server sends one visitor across its sessions, after --visitor-byte-burst; past it data requests get byte_budget and runs slow down")
	visitorBurst := fs.Int64("visitor-byte-burst", dl.VisitorByteBurst, "bytes the server sends one visitor before --visitor-bytes-per-second applies")
	idle := fs.Duration("idle-timeout", dl.IdleTimeout, "close a session after this long without a command (the page can resume it)")
	ipHeader := fs.String("client-ip-header", "", "header a trusted reverse proxy sets to the client address (e.g. X-Forwarded-For); per-visitor and per-address limits count by it. Only set it behind such a proxy")
	var allowPull pullFlag
	fs.Var(&allowPull, "allow-pull", "let visitors download models from the lab: the curated models (--allow-pull) or any hub repo (--allow-pull=any); off by default")
	dr := room.DefaultRoomOptions()
	maxRooms := fs.Int("max-rooms", dr.MaxRooms, "classroom rooms this server owns at once")
	maxFollowers := fs.Int("max-followers", dr.MaxFollowers, "students following one classroom room")
	roomDetail := fs.Int("room-detail-ms", dr.DetailMs, "a run the presenter of a classroom room streams is thinned: the heavy detail (layer traces, lens, top list, CDF) of at most one token per this many milliseconds, the rest thin, the last in full")
	natsURL := fs.String("nats", "", "NATS server URL (nats://host:4222): classroom rooms span every replica on it; empty keeps rooms in this process")
	maxPull := fs.Int64("max-pull-bytes", 1<<30, "largest download --allow-pull permits, bytes (checked against the hub's listed sizes and free disk first)")
	dbo := serve.DefaultOptions()
	batch := fs.Bool("batch", true, "run the decode steps of concurrent sessions as one batched forward pass (--batch=false: each session alone, for comparison)")
	maxBatch := fs.Int("max-batch", dbo.MaxBatch, "most decode steps in one batched forward pass")
	batchWait := fs.Duration("batch-wait", dbo.MaxWait, "longest a queued decode step waits for others to join its batch (only while fewer are queued than shared the last pass)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *maxBatch < 1 || *maxBatch > 256 {
		return fmt.Errorf("--max-batch %d out of range: allowed 1 to 256", *maxBatch)
	}
	if _, err := engine.ParseKVPrec(*kvCache); err != nil {
		return fmt.Errorf("--kv-cache: %w", err)
	}
	if *batchWait < 0 || *batchWait > time.Second {
		return fmt.Errorf("--batch-wait %v out of range: allowed 0 to 1s", *batchWait)
	}
	if *roomDetail < 1 || *roomDetail > wire.MaxDetailMs {
		return fmt.Errorf("--room-detail-ms %d out of range: allowed 1 to %d", *roomDetail, wire.MaxDetailMs)
	}
	lg := slog.New(slog.NewTextHandler(stderr, nil))
	cat, err := buildCatalog(extra, *tokPath, *defaultName, *localOK, lg)
	if err == nil && *quantized != "" {
		err = addQuantized(cat, *quantized)
	}
	if err != nil {
		return err
	}
	cat.SetBatching(*batch, serve.Options{MaxBatch: *maxBatch, MaxWait: *batchWait})
	defer cat.CloseSchedulers()
	card := cat.Models()[0]
	rooms := room.RoomOptions{MaxRooms: *maxRooms, MaxFollowers: *maxFollowers, DetailMs: *roomDetail}
	if *natsURL != "" {
		f, err := room.NewNATSFanout(*natsURL)
		if err != nil {
			return err
		}
		defer f.Close()
		rooms.Fanout = f
		lg.Info("classroom rooms span replicas through NATS", "nats", *natsURL)
	}
	// a P for the goroutines carrying requests beside the engine's workers
	// (web/sched.go)
	defer sched.ReserveRequestProc()()
	srv, err := web.New(web.Options{Logger: lg, Catalog: cat, AllowedOrigins: origins, AllowedHosts: servedHosts(*addr, hosts), Puller: puller(ctx, cat, lg, allowPull.mode, *maxPull), ClientIPHeader: *ipHeader,
		Limits: ws.Limits{MaxSessions: *maxSessions, ReadLimit: *readLimit, MsgsPerSecond: *rate, Burst: *burst, MaxKVBytes: *maxKV, KVCache: *kvCache,
			MaxSessionsPerVisitor: *perVisitor, MaxSessionsPerAddress: *perAddress, IdleTimeout: *idle, VisitorBytesPerSecond: *visitorRate, VisitorByteBurst: *visitorBurst}, Rooms: rooms,
		ModelName: card.Name, ModelCard: fmt.Sprintf("(%s, %d layers, %s parameters)", card.Arch, card.Layers, human.Count(card.Params)),
	})
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", *addr, err)
	}
	if host, _, _ := net.SplitHostPort(*addr); host == "" || host == "0.0.0.0" || host == "::" {
		lg.Warn("listening on all interfaces: anyone on your network can reach the app", "addr", *addr)
	}
	lg.Info("inferscope is running", "url", "http://"+ln.Addr().String()+"/")
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	lg.Info("shutting down")
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return srv.Shutdown(sctx)
}

type multiFlag []string

func (m *multiFlag) String() string     { return fmt.Sprint(*m) }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

// buildCatalog loads the embedded default model, any --model paths and, with
// --local-models, the models of the local stores.
func buildCatalog(paths []string, tokenizer, deflt string, localOK bool, lg *slog.Logger) (*catalog.EngineCatalog, error) {
	cat := catalog.NewEngineCatalog()
	m, err := models.Default()
	if err != nil {
		return nil, fmt.Errorf("load the embedded default model: %w", err)
	}
	if err := cat.Add(m, "trained for inferscope on public-domain text; an educational toy (see its model card)", deflt == "" || deflt == m.Name); err != nil {
		return nil, err
	}
	tr, err := models.Training()
	if err != nil {
		return nil, err
	}
	if err := cat.AddDocs(m.Name, models.Docs(), &catalog.Training{Corpus: tr.Corpus, Tokens: tr.Tokens, Minutes: tr.Minutes,
		Hardware: tr.Hardware, ValLoss: tr.ValLoss, CapitalsRight: tr.CapitalsRight, CapitalsTotal: tr.CapitalsTotal}); err != nil {
		return nil, err
	}
	for _, p := range paths {
		em, err := loadModelRef(p, tokenizer)
		if err != nil {
			return nil, err
		}
		if err := cat.Add(em, "", deflt == em.Name); err != nil {
			return nil, err
		}
		lg.Info("loaded model", "name", em.Name, "params", em.Weights.NumParams(), "from", p)
	}
	if localOK {
		for _, em := range localModels(lg) {
			if _, err := cat.Model(em.Name); err == nil {
				continue // also named by --model
			}
			if err := cat.Add(em, "", deflt == em.Name); err != nil {
				return nil, err
			}
		}
	}
	if deflt != "" {
		if _, err := cat.Model(deflt); err != nil {
			return nil, fmt.Errorf("--default: %w", err)
		}
	}
	return cat, nil
}

// addQuantized adds the embedded model quantized at load to each listed
// type, named NAME-TYPE ("stories-q4_k").
func addQuantized(cat *catalog.EngineCatalog, list string) error {
	m, err := models.Default()
	if err != nil {
		return err
	}
	for _, s := range strings.Split(list, ",") {
		dt, convert, err := parseWeightsDType(strings.TrimSpace(s))
		if err != nil {
			return fmt.Errorf("--quantized: %w", err)
		}
		if !convert || dt == engine.F32 {
			return fmt.Errorf("--quantized: %q is the embedded model itself (allowed: bf16, q8_0, q4_0, q4_k)", s)
		}
		q := m.WithWeights(dt)
		v := &engine.Model{Name: m.Name + "-" + dt.String(), Source: m.Source, Config: q.Config, Weights: q.Weights, Tokenizer: q.Tokenizer, GGUF: q.GGUF, Original: q.Original}
		if err := cat.Add(v, "the embedded model quantized to "+dt.String()+" at load", false); err != nil {
			return fmt.Errorf("--quantized: %w", err)
		}
	}
	return nil
}

// servedHosts is the Host allowlist beyond localhost and IP literals: the
// --addr host, the --allow-host names and, when listening on every
// interface, this machine's host name (what classmates type).
func servedHosts(addr string, extra []string) []string {
	out := append([]string(nil), extra...)
	host, _, _ := net.SplitHostPort(addr)
	if host != "" {
		out = append(out, host)
	}
	if host == "" || host == "0.0.0.0" || host == "::" {
		if h, err := os.Hostname(); err == nil && h != "" {
			out = append(out, h, h+".local")
		}
	}
	return out
}

// puller is the lab's downloader, or nil (downloads off) unless the
// operator passed --allow-pull.
func puller(ctx context.Context, cat *catalog.EngineCatalog, lg *slog.Logger, mode pullMode, maxBytes int64) web.Puller {
	if mode == pullOff {
		return nil
	}
	lg.Info("visitors may download models", "allowed", string(mode), "max_bytes", maxBytes)
	return newServerPuller(ctx, cat, lg, mode, maxBytes)
}
