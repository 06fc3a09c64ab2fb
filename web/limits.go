package web

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
}

// DefaultLimits are documented in the README.
func DefaultLimits() Limits {
	return Limits{MaxSessions: 64, ReadLimit: 64 << 10, MsgsPerSecond: 50, Burst: 100, SendBuffer: 256,
		SendTimeout: 10 * time.Second, WriteWait: 10 * time.Second, PongWait: 60 * time.Second, MaxKVBytes: 2 << 30}
}

func (l Limits) withDefaults() Limits {
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
	return l
}
