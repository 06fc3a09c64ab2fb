package web_test

// batching_load_test.go: the load test's client. 64 students stepping at
// once in the same process as the server would otherwise spend a third of
// the CPU decoding every event's JSON, and the load test would measure its
// own clients. This client reads raw websocket frames into one reused
// buffer (no websocket library on the read side) and checks each message
// with a cheap scan of its first bytes: the type, the protocol version,
// the wire seq (gapless), and for events their own seq, stage and next
// stage, which the server writes first. Every message must be an event of
// the expected stage in order, or the run fails: an error message, a lost
// or reordered event, a truncated message all count. The stop event, one
// per run, is decoded whole.

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"strconv"
	"testing"
	"time"

	"github.com/inferscope/inferscope/internal/wsraw"
	"github.com/inferscope/inferscope/web/wire"
	"github.com/inferscope/inferscope/web/ws"
)

// rawClient is one student's socket: hand-made frames out (masked, as
// RFC 6455 requires of clients), raw frames in.
type rawClient struct {
	c    net.Conn
	br   *bufio.Reader
	msg  []byte // the last message, reused
	hdr  [8]byte
	out  []byte
	seq  int64 // the last wire seq
	sent int64 // the last command id
}

// dialRawFrom opens a websocket to ws from local address ip by hand (the
// upgrade request, then the 101 answer) and reads the welcome.
func dialRawFrom(ip, ws string) (*rawClient, error) {
	u, err := url.Parse(ws)
	if err != nil {
		return nil, err
	}
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}
	c, err := d.Dial("tcp", u.Host)
	if err != nil {
		return nil, err
	}
	br, _, err := wsraw.Upgrade(c, u, "", 64<<10)
	if err != nil {
		return nil, err
	}
	r := &rawClient{c: c, br: br}
	typ, err := r.next()
	if err == nil && typ != wire.MsgWelcome {
		err = fmt.Errorf("first message %s, want welcome", typ)
	}
	if err != nil {
		c.Close()
		return nil, err
	}
	return r, nil
}

// send writes a command as one masked text frame (a zero mask: the payload
// as it is).
func (r *rawClient) send(typ string, payload any) error {
	r.sent++
	body := []byte(`{"type":` + strconv.Quote(typ) + `,"id":` + strconv.FormatInt(r.sent, 10))
	if payload != nil {
		p, err := json.Marshal(payload)
		if err != nil {
			return err
		}
		body = append(append(body, `,"payload":`...), p...)
	}
	body = append(body, '}')
	return r.write(0x1, body)
}

func (r *rawClient) write(op byte, p []byte) error {
	b := append(r.out[:0], 0x80|op)
	switch n := len(p); {
	case n < 126:
		b = append(b, 0x80|byte(n))
	case n < 1<<16:
		b = append(b, 0x80|126, byte(n>>8), byte(n))
	default:
		b = append(b, 0x80|127)
		b = binary.BigEndian.AppendUint64(b, uint64(n))
	}
	b = append(b, 0, 0, 0, 0) // the mask key
	b = append(b, p...)
	r.out = b
	r.c.SetWriteDeadline(time.Now().Add(20 * time.Second))
	_, err := r.c.Write(b)
	return err
}

// next reads one whole message into r.msg and returns its type, checking
// the protocol version and that the wire seq follows the last one. Pings
// are answered.
func (r *rawClient) next() (string, error) {
	r.c.SetReadDeadline(time.Now().Add(20 * time.Second))
	r.msg = r.msg[:0]
	inMsg := false
	for {
		if _, err := io.ReadFull(r.br, r.hdr[:2]); err != nil {
			return "", err
		}
		fin, op, n := r.hdr[0]&0x80 != 0, r.hdr[0]&0x0f, int(r.hdr[1]&0x7f)
		if r.hdr[1]&0x80 != 0 {
			return "", errors.New("masked frame from the server")
		}
		switch n {
		case 126:
			if _, err := io.ReadFull(r.br, r.hdr[:2]); err != nil {
				return "", err
			}
			n = int(binary.BigEndian.Uint16(r.hdr[:2]))
		case 127:
			if _, err := io.ReadFull(r.br, r.hdr[:8]); err != nil {
				return "", err
			}
			n = int(binary.BigEndian.Uint64(r.hdr[:8]))
		}
		if op >= 8 { // control: close, ping, pong
			p := make([]byte, n)
			if _, err := io.ReadFull(r.br, p); err != nil {
				return "", err
			}
			switch op {
			case 8:
				return "", fmt.Errorf("closed by the server: %q", p)
			case 9:
				if err := r.write(0xa, p); err != nil {
					return "", err
				}
			}
			continue
		}
		if (op == 0) != inMsg {
			return "", fmt.Errorf("unexpected frame opcode %d", op)
		}
		inMsg = true
		k := len(r.msg)
		r.msg = append(r.msg, make([]byte, n)...)[:k+n]
		if _, err := io.ReadFull(r.br, r.msg[k:]); err != nil {
			return "", err
		}
		if fin {
			break
		}
	}
	return r.head()
}

var (
	typePrefix = []byte(`{"type":"`)
	versionKey = []byte(`","v":` + strconv.Itoa(wire.ProtocolVersion) + `,"seq":`)
)

// head checks the message's first fields as the server writes them
// ({"type":T,"v":V,"seq":N,...}) and that it is one whole object.
func (r *rawClient) head() (string, error) {
	m := r.msg
	if !bytes.HasPrefix(m, typePrefix) || m[len(m)-1] != '}' {
		return "", fmt.Errorf("not a whole server message: %.120q", m)
	}
	end := bytes.IndexByte(m[len(typePrefix):], '"')
	if end < 0 {
		return "", fmt.Errorf("no type: %.120q", m)
	}
	typ := string(m[len(typePrefix) : len(typePrefix)+end])
	rest := m[len(typePrefix)+end:]
	if !bytes.HasPrefix(rest, versionKey) {
		return "", fmt.Errorf("%s message without version %d and seq: %.120q", typ, wire.ProtocolVersion, m)
	}
	seq, _ := leadingInt(rest[len(versionKey):])
	if seq != r.seq+1 {
		return "", fmt.Errorf("seq %d after %d: a message was lost or reordered", seq, r.seq)
	}
	r.seq = seq
	return typ, nil
}

// leadingInt parses the decimal number b starts with.
func leadingInt(b []byte) (n int64, digits int) {
	for _, d := range b {
		if d < '0' || d > '9' {
			break
		}
		n = n*10 + int64(d-'0')
		digits++
	}
	return n, digits
}

// rawEvent is what the scan reads of an event: its seq, stage and next
// stage, which session.Event encodes first.
type rawEvent struct {
	seq         int64
	stage, next string
}

var eventKey = []byte(`"payload":{"seq":`)

// event reads the next message, which must be an event, and scans its
// first fields.
func (r *rawClient) event() (rawEvent, error) {
	typ, err := r.next()
	if err != nil {
		return rawEvent{}, err
	}
	return r.scanEvent(typ)
}

// scanEvent reads an event's first fields from r.msg, a message of type typ.
func (r *rawClient) scanEvent(typ string) (rawEvent, error) {
	if typ != wire.MsgEvent {
		return rawEvent{}, fmt.Errorf("got %s during a run: %.300s", typ, r.msg)
	}
	m := r.msg
	k := bytes.Index(m, eventKey)
	if k < 0 {
		return rawEvent{}, fmt.Errorf("event without its seq first: %.120q", m)
	}
	m = m[k+len(eventKey):]
	var e rawEvent
	seq, n := leadingInt(m)
	if n == 0 {
		return rawEvent{}, fmt.Errorf("event seq: %.120q", r.msg)
	}
	e.seq, m = seq, m[n:]
	var err error
	if e.stage, m, err = stringField(m, `,"stage":"`); err == nil {
		e.next, _, err = stringField(m, `,"next":"`)
	}
	if err != nil {
		return rawEvent{}, fmt.Errorf("%v in %.160q", err, r.msg)
	}
	return e, nil
}

// stringField reads a plain (unescaped) string value that m starts with
// after key.
func stringField(m []byte, key string) (string, []byte, error) {
	if !bytes.HasPrefix(m, []byte(key)) {
		return "", m, fmt.Errorf("no %s next", key)
	}
	m = m[len(key):]
	end := bytes.IndexByte(m, '"')
	if end < 0 {
		return "", m, fmt.Errorf("unterminated %s", key)
	}
	return string(m[:end]), m[end+1:], nil
}

// rawRunToEnd is runToEnd for a raw client: start, three steps, then
// step_token until the stop event, checking every event's seq and stage
// against the previous event's next. It returns the events and each
// command's round trip.
func rawRunToEnd(r *rawClient, prompt string, n int) (events int, lat []time.Duration, err error) {
	if err := r.send("start", startPayload(prompt, n)); err != nil {
		return 0, nil, err
	}
	if typ, err := r.next(); err != nil || typ != wire.MsgStarted {
		return 0, nil, fmt.Errorf("start: %s %v %.300s", typ, err, r.msg)
	}
	var last rawEvent
	expect := func(stage string) error {
		e, err := r.event()
		if err != nil {
			return err
		}
		if e.seq != last.seq+1 || e.stage != stage {
			return fmt.Errorf("event %d %s after %d, expected %s: lost or reordered", e.seq, e.stage, last.seq, stage)
		}
		last = e
		events++
		return nil
	}
	for _, st := range []string{"tokenize", "embed", "prefill"} {
		t0 := time.Now()
		if err := r.send("step", nil); err != nil {
			return events, lat, err
		}
		if err := expect(st); err != nil {
			return events, lat, err
		}
		lat = append(lat, time.Since(t0))
	}
	for {
		t0 := time.Now()
		if err := r.send("step_token", nil); err != nil {
			return events, lat, err
		}
		for {
			if err := expect(last.next); err != nil {
				return events, lat, err
			}
			if last.stage == "append" || last.stage == "stop" {
				break
			}
		}
		lat = append(lat, time.Since(t0))
		if last.stage != "stop" && last.next == "stop" {
			if err := r.send("step", nil); err != nil {
				return events, lat, err
			}
			if err := expect("stop"); err != nil {
				return events, lat, err
			}
		}
		if last.stage == "stop" {
			return events, lat, checkStop(r.msg, n)
		}
	}
}

// checkStop decodes the stop event whole: the run generated all n tokens.
func checkStop(msg []byte, n int) error {
	var m struct {
		Payload struct {
			Stop struct {
				Reason    string `json:"reason"`
				Generated int    `json:"generated"`
			} `json:"stop"`
		} `json:"payload"`
	}
	if err := json.Unmarshal(msg, &m); err != nil {
		return fmt.Errorf("stop event: %v", err)
	}
	if s := m.Payload.Stop; s.Generated != n && s.Reason == "max_new_tokens" || s.Generated > n {
		return fmt.Errorf("stop after %d tokens (%s), asked for %d", s.Generated, s.Reason, n)
	}
	return nil
}

// TestRawLoadClientChecksOrder: the load test's client runs a whole
// generation, and its scan reads the fields it checks.
func TestRawLoadClientChecksOrder(t *testing.T) {
	ts := newWSServer(t, ws.Limits{MsgsPerSecond: 1e6, Burst: 1e6})
	r, err := dialRawFrom("127.0.0.1", wsURL(ts))
	if err != nil {
		t.Fatal(err)
	}
	defer r.c.Close()
	events, lat, err := rawRunToEnd(r, "The President said", 12)
	if err != nil {
		t.Fatal(err)
	}
	// tokenize, embed, prefill, then logits, sample, append per token and
	// the stop event (a run that hits the end of text stops sooner)
	if events < 3+3+1 || events > 3+3*12+1 || len(lat) < 4 {
		t.Fatalf("%d events, %d round trips", events, len(lat))
	}
	for _, tc := range []struct {
		name, msg string
		want      string
	}{
		{"error", `{"type":"error","v":1,"seq":1,"payload":{"code":"busy"}}`, "got error"},
		{"gap", `{"type":"event","v":1,"seq":2,"payload":{"seq":1,"stage":"tokenize","next":"embed"}}`, "seq 2 after 0"},
		{"version", `{"type":"event","v":9,"seq":1,"payload":{}}`, "without version"},
		{"cut", `{"type":"event","v":1,"seq":1,"payload":{"seq":1,"stage":"tok`, "not a whole"},
		{"order", `{"type":"event","v":1,"seq":1,"payload":{"next":"embed","seq":1,"stage":"tokenize"}}`, "without its seq first"},
	} {
		c := &rawClient{msg: []byte(tc.msg)}
		typ, err := c.head()
		if err == nil {
			_, err = c.scanEvent(typ)
		}
		if err == nil || !bytes.Contains([]byte(err.Error()), []byte(tc.want)) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
	c := &rawClient{msg: []byte(`{"type":"event","v":1,"seq":1,"payload":{"seq":7,"stage":"logits","next":"sample","logits":{}}}`)}
	typ, err := c.head()
	if err != nil {
		t.Fatal(err)
	}
	if e, err := c.scanEvent(typ); err != nil || e != (rawEvent{7, "logits", "sample"}) {
		t.Fatalf("scan %+v %v", e, err)
	}
}
