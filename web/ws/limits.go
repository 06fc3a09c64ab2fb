package ws

// limits.go: what one server and one connection may use, with defaults.

import "time"

// Limits bound what one server and one connection may use. Zero fields
// take the defaults of DefaultLimits.
type Limits struct {
	MaxSessions   int           `json:"max_sessions"`     // concurrent websocket connections
	ReadLimit     int64         `json:"read_limit_bytes"` // largest client message
	MsgsPerSecond float64       `json:"messages_per_second"`
	Burst         int           `json:"burst"`
	SendBuffer    int           `json:"send_buffer"` // queued server messages per connection
	SendTimeout   time.Duration `json:"-"`           // how long an engine step may wait for a slow client
	WriteWait     time.Duration `json:"-"`
	PongWait      time.Duration `json:"-"`
	MaxKVBytes    int64         `json:"max_kv_bytes"` // total KV cache across sessions
	// KVCache is the KV cache precision ("f32", "f16", "bf16") of runs
	// whose start does not name one ("": f32).
	KVCache string `json:"kv_cache,omitempty"`

	// Per visitor (a browser at a client address; see visitors.go).
	MaxSessionsPerVisitor int `json:"max_sessions_per_visitor"` // open websocket sessions
	// MaxSessionsPerAddress caps the sessions of all visitors at one
	// client address together (a class behind one NAT, or one machine
	// minting visitor cookies); 0 means MaxSessions, so one address can
	// hold a full class.
	MaxSessionsPerAddress int `json:"max_sessions_per_address"`
	MaxConnsPerVisitor    int `json:"-"` // open TCP connections (Serve only)
	// IdleTimeout closes a session with no command (pings aside) for this
	// long; the client gets closing with code "idle" and may resume.
	IdleTimeout time.Duration `json:"-"`
	// VisitorBytesPerSecond and VisitorByteBurst are the byte budget of a
	// visitor's messages across its connections (bytebudget.go): a burst,
	// then a steady rate. Past it data requests get byte_budget and runs
	// slow down to the rate.
	VisitorBytesPerSecond int64 `json:"visitor_bytes_per_second"`
	VisitorByteBurst      int64 `json:"visitor_byte_burst"`

	// HTTP server timeouts (Serve only; the websocket clears them once
	// upgraded).
	ReadHeaderTimeout time.Duration `json:"-"`
	ReadTimeout       time.Duration `json:"-"`
	WriteTimeout      time.Duration `json:"-"`
	HTTPIdleTimeout   time.Duration `json:"-"` // idle keep-alive connections
}

// DefaultLimits are documented in the README.
func DefaultLimits() Limits {
	return Limits{MaxSessions: 64, ReadLimit: 64 << 10, MsgsPerSecond: 50, Burst: 100, SendBuffer: 256,
		SendTimeout: 10 * time.Second, WriteWait: 10 * time.Second, PongWait: 60 * time.Second, MaxKVBytes: 2 << 30,
		MaxSessionsPerVisitor: 8, MaxConnsPerVisitor: 256, VisitorBytesPerSecond: 4 << 20, VisitorByteBurst: 32 << 20, IdleTimeout: 15 * time.Minute,
		ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second, WriteTimeout: 60 * time.Second, HTTPIdleTimeout: 120 * time.Second}
}

func (l Limits) WithDefaults() Limits {
	d := DefaultLimits()
	if l.MaxSessions <= 0 {
		l.MaxSessions = d.MaxSessions
	}
	if l.ReadLimit <= 0 {
		l.ReadLimit = d.ReadLimit
	}
	if l.MsgsPerSecond <= 0 {
		l.MsgsPerSecond = d.MsgsPerSecond
	}
	if l.Burst <= 0 {
		l.Burst = d.Burst
	}
	if l.SendBuffer <= 0 {
		l.SendBuffer = d.SendBuffer
	}
	if l.SendTimeout <= 0 {
		l.SendTimeout = d.SendTimeout
	}
	if l.WriteWait <= 0 {
		l.WriteWait = d.WriteWait
	}
	if l.PongWait <= 0 {
		l.PongWait = d.PongWait
	}
	if l.MaxKVBytes <= 0 {
		l.MaxKVBytes = d.MaxKVBytes
	}
	if l.MaxSessionsPerAddress <= 0 || l.MaxSessionsPerAddress > l.MaxSessions {
		l.MaxSessionsPerAddress = l.MaxSessions
	}
	for _, f := range []struct{ v, d *int64 }{{&l.VisitorBytesPerSecond, &d.VisitorBytesPerSecond}, {&l.VisitorByteBurst, &d.VisitorByteBurst}} {
		if *f.v <= 0 {
			*f.v = *f.d
		}
	}
	for _, f := range []struct{ v, d *int }{{&l.MaxSessionsPerVisitor, &d.MaxSessionsPerVisitor}, {&l.MaxConnsPerVisitor, &d.MaxConnsPerVisitor}} {
		if *f.v <= 0 {
			*f.v = *f.d
		}
	}
	for _, f := range []struct{ v, d *time.Duration }{{&l.IdleTimeout, &d.IdleTimeout}, {&l.ReadHeaderTimeout, &d.ReadHeaderTimeout},
		{&l.ReadTimeout, &d.ReadTimeout}, {&l.WriteTimeout, &d.WriteTimeout}, {&l.HTTPIdleTimeout, &d.HTTPIdleTimeout}} {
		if *f.v <= 0 {
			*f.v = *f.d
		}
	}
	return l
}
