package room

// fanout_nats.go: the Fanout on NATS (github.com/nats-io/nats.go), so that
// several inferscope replicas behind a load balancer serve one room: the
// room's owner publishes its stream once, each replica with followers of
// that room subscribes once and fans out to its own websockets.

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
)

// NATSFanout is a Fanout over one NATS connection.
type NATSFanout struct {
	nc *nats.Conn
}

// NewNATSFanout connects to the NATS server(s) at url (nats://host:4222,
// comma-separated for a cluster). The connection reconnects on its own;
// rooms resynchronise from their owner when they notice a gap.
func NewNATSFanout(url string, opts ...nats.Option) (*NATSFanout, error) {
	opts = append([]nats.Option{nats.Name("inferscope"), nats.MaxReconnects(-1), nats.ReconnectWait(500 * time.Millisecond)}, opts...)
	nc, err := nats.Connect(url, opts...)
	if err != nil {
		return nil, fmt.Errorf("connect to NATS at %s: %w", url, err)
	}
	return &NATSFanout{nc: nc}, nil
}

// Publish sends b on subject.
func (f *NATSFanout) Publish(subject string, b []byte) error {
	return f.nc.Publish(subject, b)
}

// Subscribe calls fn with each message on subject, in order, on the
// subscription's own goroutine. A subscriber that falls too far behind
// loses messages (NATS slow-consumer rule); rooms detect the gap by their
// sequence numbers and resynchronise.
func (f *NATSFanout) Subscribe(subject string, fn func([]byte)) (Subscription, error) {
	sub, err := f.nc.Subscribe(subject, func(m *nats.Msg) { fn(m.Data) })
	if err != nil {
		return nil, err
	}
	return sub, f.nc.Flush() // the subscription is live on the server when this returns
}

// Handle answers requests on subject.
func (f *NATSFanout) Handle(subject string, fn func([]byte) []byte) (Subscription, error) {
	sub, err := f.nc.Subscribe(subject, func(m *nats.Msg) { _ = m.Respond(fn(m.Data)) })
	if err != nil {
		return nil, err
	}
	return sub, f.nc.Flush()
}

// Request asks subject's responder.
func (f *NATSFanout) Request(ctx context.Context, subject string, req []byte) ([]byte, error) {
	m, err := f.nc.RequestWithContext(ctx, subject, req)
	if errors.Is(err, nats.ErrNoResponders) {
		return nil, ErrNoResponder
	}
	if err != nil {
		return nil, err
	}
	return m.Data, nil
}

// MaxPayload is the largest message the NATS server accepts.
func (f *NATSFanout) MaxPayload() int64 { return f.nc.MaxPayload() }

// Close drains the connection.
func (f *NATSFanout) Close() error {
	f.nc.Close()
	return nil
}
