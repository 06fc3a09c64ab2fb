package ws

// control.go: one writer per socket. gorilla answers a peer's ping (and
// echoes its close) from the reader goroutine with WriteControl, which
// takes only gorilla's own write lock, while our writers put whole frames
// straight on the connection (net.Buffers, one writev per batch). A pong
// written by the reader could land inside one of those frames (seen: the
// pong byte 0x8A inside an event's JSON). So the reader never writes: the
// ping and close handlers hand their frames to the connection's writer
// goroutine, which writes them between its own frames.

import (
	"net"
	"time"

	"github.com/gorilla/websocket"
	"github.com/inferscope/inferscope/web/sched"
)

// CtlFrame is a control frame the reader asks the writer to send.
type CtlFrame struct {
	Type int // websocket.PongMessage or websocket.CloseMessage
	data []byte
}

// RelayControl makes ws's ping and close handlers queue their answers on
// ctl instead of writing them. A full queue drops a pong (a peer needs an
// answer only to its latest ping).
func RelayControl(ws *websocket.Conn, ctl chan CtlFrame) {
	ws.SetPingHandler(func(data string) error {
		select {
		case ctl <- CtlFrame{websocket.PongMessage, []byte(data)}:
		default:
		}
		return nil
	})
	ws.SetCloseHandler(func(code int, text string) error {
		msg := []byte{}
		if code != websocket.CloseNoStatusReceived {
			msg = websocket.FormatCloseMessage(code, "")
		}
		select {
		case ctl <- CtlFrame{websocket.CloseMessage, msg}:
		default:
		}
		return nil
	})
}

// WriteControl sends f from the writer goroutine.
func WriteControl(ws *websocket.Conn, f CtlFrame, wait time.Duration) error {
	return ws.WriteControl(f.Type, f.data, time.Now().Add(wait))
}

// RawConn is the connection frames are written to: under Serve every
// connection is a countedConn (visitors.go), which would turn a writev
// into one write per buffer; its inner connection keeps it one system call.
func RawConn(nc net.Conn) net.Conn {
	if cc, ok := nc.(*sched.CountedConn); ok {
		return cc.Conn
	}
	return nc
}
