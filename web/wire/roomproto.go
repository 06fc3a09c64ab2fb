package wire

// roomproto.go: the classroom part of the websocket protocol — the room
// commands a presenter sends on /ws, the few a follower may send on
// /ws/room, the messages rooms send, and their strict decoding.

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Presenter commands (on /ws). Every one but room_open carries the room's
// presenter key, checked on each command.
const (
	CmdRoomOpen   = "room_open"   // RoomPayload{page, start?, log?}: open a room presenting this connection's run
	CmdRoomClaim  = "room_claim"  // {code, key}: reclaim a room after a reconnect; the run is rebuilt from the room's log
	CmdRoomClose  = "room_close"  // {code, key}
	CmdRoomPoll   = "room_poll"   // {code, key, question, options}: ask the class
	CmdRoomReveal = "room_reveal" // {code, key}: close the poll and show everyone the counts
	CmdRoomRecall = "room_recall" // {code, key}: bring every branched student back to the class
	CmdRoomPage   = "room_page"   // {code, key, page, state?}: the presenter is on another page (lab, compare, a lesson) or its page changed (a lesson's section, compare's results)
	CmdRoomRemove = "room_remove" // {code, key, network}: remove every student of one network (room_counts' networks) and keep it out of this class
)

// Follower commands (on /ws/room).
const (
	CmdRoomVote   = "room_vote"   // {poll, option}
	CmdRoomBranch = "room_branch" // "Try it myself": stop following, get the presenter's start and log ({page} on compare and lessons: just stop following)
	CmdRoomFollow = "room_follow" // "Back to the class": the current state, then the live stream
)

// Room messages, server → client.
const (
	MsgRoomOpened  = "room_opened"  // presenter: {code, key, join_path, qr_path, expires_at, max_followers}
	MsgRoomJoined  = "room_joined"  // follower: {code, page, followers, max_followers}
	MsgRoomLog     = "room_log"     // {start, log_len}: the presenter's settings
	MsgRoomBranch  = "room_branch"  // follower: {start, log}, to resume privately
	MsgRoomPoll    = "room_poll"    // {id, question, options, open, counts?, votes?}
	MsgRoomRecall  = "room_recall"  // bring everyone back
	MsgRoomCounts  = "room_counts"  // {followers, branched, poll?: {id, counts, votes}}
	MsgRoomClosed  = "room_closed"  // {reason}: the room has ended
	MsgRoomPage    = "room_page"    // {page, state}: the page the presenter is on and what it shows
	MsgRoomRemoved = "room_removed" // between replicas only: {network}, whose followers leave the class
	maxPageState   = 56 << 10       // bytes of a page's state (it travels in one /ws message)
	maxPollOptions = 8
	maxPollLabel   = 80
	maxQuestion    = 200
	MaxAnswer      = 64 // a typed answer to an open poll
	MaxAnswerKinds = 24 // distinct typed answers the counts list (the rest: "other")
)

var roomCommandTypes = []string{CmdRoomOpen, CmdRoomClaim, CmdRoomClose, CmdRoomPoll, CmdRoomReveal, CmdRoomRecall, CmdRoomPage, CmdRoomRemove, CmdRoomClass, CmdRoomVote, CmdRoomBranch, CmdRoomFollow}

// roomPages are the pages a class can follow: the lab, compare and a
// lesson (its section is part of the page's state).
var roomPages = regexp.MustCompile(`^/(lab|compare|lessons/[a-z0-9][a-z0-9-]{0,79})$`)

func ValidRoomPage(p string) bool { return roomPages.MatchString(p) }

// RoomPayload is the payload of every room command (fields by command).
type RoomPayload struct {
	Code     string        `json:"code"`
	Key      string        `json:"key"`
	Page     string        `json:"page"`
	Start    *StartPayload `json:"start"`
	Log      []LogEntry    `json:"log"`
	Question string        `json:"question"`
	Options  []string      `json:"options"`
	Poll     int64         `json:"poll"`
	Option   *int          `json:"option"`
	// Kind is a poll's kind of answer: "choice" (the default: Options),
	// or "number" or "text" (each student types an answer: room_vote's
	// Answer). Reveal is room_reveal's: what the model (or the live
	// panel) says, one line per option or one for an open question, shown
	// to everyone beside the class's answers.
	Kind   string   `json:"kind"`
	Answer string   `json:"answer"`
	Reveal []string `json:"reveal"`
	// Network is room_remove's: one of room_counts' networks.
	Network string `json:"network"`
	// Batch is room_class's: the class's decode steps share passes (off:
	// each student's run alone, serve --batch=false for this request).
	Batch bool `json:"batch"`
	// State is what a compare or lesson page shows (room_open, room_page):
	// an object of at most maxPageState bytes that followers' pages draw.
	State json.RawMessage `json:"state"`
}

func IsRoomCommand(t string) bool {
	for _, r := range roomCommandTypes {
		if r == t {
			return true
		}
	}
	return false
}

// decodeRoomPayload fills c.Room from payload and checks what each
// command needs, naming what is wrong and what is allowed.
func decodeRoomPayload(c *Command, payload []byte) error {
	var p RoomPayload
	if err := strictUnmarshal(payload, &p); err != nil {
		return protoErr(CodeBadPayload, "%s payload: %s", c.Type, describeJSONError(err))
	}
	if len(p.Log) > MaxResumeLog {
		return protoErr(CodeBadPayload, "%s log has %d entries; the limit is %d", c.Type, len(p.Log), MaxResumeLog)
	}
	needKey := func() error {
		if !ValidRoomCode(p.Code) {
			return protoErr(CodeBadPayload, "%s needs code, the room's join code (%d letters and digits)", c.Type, RoomCodeLen)
		}
		if p.Key == "" {
			return protoErr(CodeBadPayload, "%s needs key, the presenter key this browser got when it opened the room", c.Type)
		}
		return nil
	}
	if p.Page != "" && !ValidRoomPage(p.Page) {
		return protoErr(CodeBadPayload, "%s page must be one a class can follow: \"/lab\", \"/compare\" or \"/lessons/NAME\"", c.Type)
	}
	if len(p.State) > 0 {
		if len(p.State) > maxPageState {
			return protoErr(CodeBadPayload, "%s state is %d bytes; the limit is %d", c.Type, len(p.State), maxPageState)
		}
		if s := strings.TrimSpace(string(p.State)); s != "null" && !strings.HasPrefix(s, "{") {
			return protoErr(CodeBadPayload, "%s state must be an object (what the page shows)", c.Type)
		}
	}
	switch c.Type {
	case CmdRoomOpen:
		if len(p.Log) > 0 && p.Start == nil {
			return protoErr(CodeBadPayload, "room_open: a log needs the start settings it follows")
		}
	case CmdRoomPage:
		if err := needKey(); err != nil {
			return err
		}
		if p.Page == "" {
			return protoErr(CodeBadPayload, "room_page needs page: \"/lab\", \"/compare\" or \"/lessons/NAME\"")
		}
	case CmdRoomClaim, CmdRoomClose, CmdRoomRecall:
		if err := needKey(); err != nil {
			return err
		}
	case CmdRoomClass:
		if err := needKey(); err != nil {
			return err
		}
		if p.Start == nil {
			return protoErr(CodeBadPayload, "room_class needs start: the prompt and settings every student's device sends")
		}
	case CmdRoomRemove:
		if err := needKey(); err != nil {
			return err
		}
		if !ValidNetworkID(p.Network) {
			return protoErr(CodeBadPayload, "room_remove needs network, one of the networks room_counts lists (%d hex digits)", 2*NetworkIDBytes)
		}
	case CmdRoomPoll:
		if err := needKey(); err != nil {
			return err
		}
		if p.Question == "" || len(p.Question) > maxQuestion {
			return protoErr(CodeBadPayload, "room_poll needs a question of 1 to %d bytes", maxQuestion)
		}
		switch p.Kind {
		case "", "choice":
			p.Kind = "choice"
		case "number", "text":
			if len(p.Options) > 0 {
				return protoErr(CodeBadPayload, "room_poll of kind %s takes no options: each student types an answer", p.Kind)
			}
		default:
			return protoErr(CodeBadPayload, "room_poll kind must be \"choice\", \"number\" or \"text\", not %q", p.Kind)
		}
		if p.Kind != "choice" {
			break
		}
		if len(p.Options) < 2 || len(p.Options) > maxPollOptions {
			return protoErr(CodeBadPayload, "room_poll needs 2 to %d options, got %d", maxPollOptions, len(p.Options))
		}
		for i, o := range p.Options {
			if o == "" || len(o) > maxPollLabel || !utf8.ValidString(o) {
				return protoErr(CodeBadPayload, "room_poll option %d must be 1 to %d bytes of text", i, maxPollLabel)
			}
		}
	case CmdRoomReveal:
		if err := needKey(); err != nil {
			return err
		}
		if len(p.Reveal) > maxPollOptions {
			return protoErr(CodeBadPayload, "room_reveal takes at most %d reveal lines, got %d", maxPollOptions, len(p.Reveal))
		}
		for i, s := range p.Reveal {
			if len(s) > maxPollLabel || !utf8.ValidString(s) {
				return protoErr(CodeBadPayload, "room_reveal line %d must be at most %d bytes of text", i, maxPollLabel)
			}
		}
	case CmdRoomVote:
		if p.Poll <= 0 || (p.Option == nil) == (p.Answer == "") {
			return protoErr(CodeBadPayload, "room_vote needs poll (the poll's id) and either option (the index of your answer) or answer (your typed answer)")
		}
		if len(p.Answer) > MaxAnswer || !utf8.ValidString(p.Answer) {
			return protoErr(CodeBadPayload, "room_vote answer must be at most %d bytes of text", MaxAnswer)
		}
	}
	c.Room = &p
	return nil
}

// RoomMsg is one message of a room's stream as it travels between
// replicas: "seq\ttype\t" then the JSON payload, so a replica can fan the
// payload out without decoding it. An event sent in full whose heavy
// detail a later event supersedes also carries its thin form (thin.go),
// computed once by the owner, for the views' late-joiner snapshots:
// "seq\ttype\t~N\t" then the N bytes of the thin form, then the payload.
// A JSON payload never starts with '~'.
type RoomMsg struct {
	Seq     int64
	Type    string
	Payload []byte
	Thin    []byte // an event's thin form; nil: none
}

func (m RoomMsg) Encode() []byte {
	b := make([]byte, 0, len(m.Payload)+len(m.Thin)+40)
	b = strconv.AppendInt(b, m.Seq, 10)
	b = append(b, '\t')
	b = append(b, m.Type...)
	b = append(b, '\t')
	if m.Thin != nil {
		b = append(b, '~')
		b = strconv.AppendInt(b, int64(len(m.Thin)), 10)
		b = append(b, '\t')
		b = append(b, m.Thin...)
	}
	return append(b, m.Payload...)
}

func DecodeRoomMsg(b []byte) (RoomMsg, bool) {
	var m RoomMsg
	i := strings.IndexByte(string(b[:min(len(b), 24)]), '\t')
	if i <= 0 {
		return m, false
	}
	for _, d := range b[:i] {
		if d < '0' || d > '9' {
			return m, false
		}
		m.Seq = m.Seq*10 + int64(d-'0')
	}
	rest := b[i+1:]
	j := strings.IndexByte(string(rest[:min(len(rest), 32)]), '\t')
	if j <= 0 {
		return m, false
	}
	m.Type, m.Payload = string(rest[:j]), rest[j+1:]
	if len(m.Payload) > 0 && m.Payload[0] == '~' {
		k := strings.IndexByte(string(m.Payload[:min(len(m.Payload), 16)]), '\t')
		if k <= 1 {
			return m, false
		}
		n := 0
		for _, d := range m.Payload[1:k] {
			if d < '0' || d > '9' || n > len(b) {
				return m, false
			}
			n = n*10 + int(d-'0')
		}
		body := m.Payload[k+1:]
		if n <= 0 || n > len(body) {
			return m, false
		}
		m.Thin, m.Payload = body[:n], body[n:]
	}
	return m, len(m.Payload) > 0
}

// Class request messages (classrequest.go).
const (
	CmdRoomClass       = "room_class"        // presenter: {code, key, start, batch}: every following student sends start now
	MsgRoomClass       = "room_class"        // class: {id, start, batch}: send this request, as your own session
	MsgRoomClassState  = "room_class_state"  // presenter: the class request so far (classState)
	MsgRoomClassResult = "room_class_result" // class: the finished request's rows, for each student's rank
)

// ClassTag marks a start as a student's part of a class request.
type ClassTag struct {
	Code string `json:"code"`
	ID   int64  `json:"id"`
	Row  string `json:"row"` // the page's anonymous id for its row: 8 hex digits
}

func (t *ClassTag) Valid() bool {
	if t == nil || !ValidRoomCode(t.Code) || t.ID <= 0 || len(t.Row) != 8 {
		return false
	}
	_, err := hex.DecodeString(t.Row)
	return err == nil
}

// String shows a room message for test failures.
func (m RoomMsg) String() string {
	return fmt.Sprintf("{seq %d, type %q, payload %q, thin %q}", m.Seq, m.Type, m.Payload, m.Thin)
}
