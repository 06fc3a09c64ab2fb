package room

// fanout.go: the small interface rooms use to carry messages between
// replicas (publish/subscribe per subject, plus one request/reply
// responder per subject), and its in-process implementation, the default.
// fanout_nats.go implements it on NATS so that several replicas serve one
// room.

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
)

// Fanout carries room messages. Subjects are dot-separated names
// ("inferscope.room.ABC234.ev"). Every subscriber of a subject sees the
// messages one publisher published on it in the order they were
// published; a subscriber's callback runs on one goroutine at a time and
// must not block for long.
type Fanout interface {
	// Publish sends b to every subscriber of subject, on every replica.
	Publish(subject string, b []byte) error
	// Subscribe calls fn with each message published on subject.
	Subscribe(subject string, fn func(b []byte)) (Subscription, error)
	// Handle answers requests on subject with fn's reply. The room's owner
	// is the one responder of its subjects.
	Handle(subject string, fn func(req []byte) []byte) (Subscription, error)
	// Request asks subject's responder; ErrNoResponder when there is none.
	Request(ctx context.Context, subject string, req []byte) ([]byte, error)
	// Close ends every subscription.
	Close() error
}

// Subscription is one Subscribe or Handle registration.
type Subscription interface {
	Unsubscribe() error
}

// ErrNoResponder is Request's error when nobody answers the subject (for
// rooms: no replica has a room with that code).
var ErrNoResponder = errors.New("no responder for the subject")

// LocalFanout is the in-process Fanout: subscribers are called directly by
// Publish, in order, under the subject's lock. Servers in one process that
// share one LocalFanout share their rooms.
type LocalFanout struct {
	mu       sync.RWMutex
	subs     map[string][]*localSub
	handlers map[string]*localSub
	closed   bool
}

type localSub struct {
	f       *LocalFanout
	subject string
	mu      sync.Mutex // one callback at a time
	fn      func([]byte)
	req     func([]byte) []byte
	gone    atomic.Bool
}

// NewLocalFanout returns an empty in-process bus.
func NewLocalFanout() *LocalFanout {
	return &LocalFanout{subs: map[string][]*localSub{}, handlers: map[string]*localSub{}}
}

// Publish calls every subscriber of subject before it returns.
func (f *LocalFanout) Publish(subject string, b []byte) error {
	f.mu.RLock()
	if f.closed {
		f.mu.RUnlock()
		return errors.New("fanout closed")
	}
	subs := f.subs[subject]
	f.mu.RUnlock()
	for _, s := range subs {
		s.mu.Lock()
		if !s.gone.Load() {
			s.fn(b)
		}
		s.mu.Unlock()
	}
	return nil
}

// Subscribe registers fn for subject.
func (f *LocalFanout) Subscribe(subject string, fn func([]byte)) (Subscription, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return nil, errors.New("fanout closed")
	}
	s := &localSub{f: f, subject: subject, fn: fn}
	// copy on write: Publish iterates a snapshot without the lock
	f.subs[subject] = append(append([]*localSub(nil), f.subs[subject]...), s)
	return s, nil
}

// Handle registers the responder for subject; a second one is an error.
func (f *LocalFanout) Handle(subject string, fn func([]byte) []byte) (Subscription, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return nil, errors.New("fanout closed")
	}
	if f.handlers[subject] != nil {
		return nil, errors.New("subject " + subject + " already has a responder")
	}
	s := &localSub{f: f, subject: subject, req: fn}
	f.handlers[subject] = s
	return s, nil
}

// Request calls subject's responder directly.
func (f *LocalFanout) Request(ctx context.Context, subject string, req []byte) ([]byte, error) {
	f.mu.RLock()
	h := f.handlers[subject]
	f.mu.RUnlock()
	if h == nil {
		return nil, ErrNoResponder
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return h.req(req), nil
}

// Close drops every subscription.
func (f *LocalFanout) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.closed = true
	f.subs = map[string][]*localSub{}
	f.handlers = map[string]*localSub{}
	return nil
}

func (s *localSub) Unsubscribe() error {
	f := s.f
	f.mu.Lock()
	defer f.mu.Unlock()
	if s.req != nil {
		if f.handlers[s.subject] == s {
			delete(f.handlers, s.subject)
		}
		return nil
	}
	old := f.subs[s.subject]
	var keep []*localSub
	for _, x := range old {
		if x != s {
			keep = append(keep, x)
		}
	}
	if len(keep) == 0 {
		delete(f.subs, s.subject)
	} else {
		f.subs[s.subject] = keep
	}
	s.gone.Store(true) // not s.mu: a callback may unsubscribe itself
	return nil
}
