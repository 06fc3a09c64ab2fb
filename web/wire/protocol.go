// Package wire is the versioned websocket protocol: message types and
// payloads, strict decoding with errors that name what was wrong, the error
// codes, the envelope every message is framed in, and the classroom's
// messages. It imports nothing of the server.
package wire

// protocol.go: the websocket wire contract: message types, payloads,
// strict decoding with clear errors.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/inferscope/inferscope/engine"
	"github.com/inferscope/inferscope/engine/session"
	"github.com/inferscope/inferscope/engine/tokenizer"
)

// ProtocolVersion is the websocket protocol's version. Every server message
// carries it; a client's hello names the version it speaks.
const ProtocolVersion = 1

// Client → server message types.
const (
	CmdHello     = "hello"        // {version}
	CmdStart     = "start"        // StartPayload: new run (replaces the current one)
	CmdStep      = "step"         // one stage
	CmdStepToken = "step_token"   // stages through the next append
	CmdRun       = "run"          // to the end, streaming every event; {detail_ms?}: thin the heavy detail (thin.go)
	CmdCancel    = "cancel"       // stop a run in progress
	CmdPause     = "pause"        // pause a streaming run after its current stage; run again continues it
	CmdSampling  = "set_sampling" // SamplingPayload: the run's sampling settings from the current step on
	CmdRewind    = "rewind"       // {n}
	CmdForce     = "force"        // {id}
	CmdReset     = "reset"        // restart the current run with the same settings
	CmdLogits    = "get_logits"   // the full logit vector of the current step
	CmdSampleN   = "sample_n"     // {n}: histogram of n draws at the current step
	CmdPing      = "ping"
	CmdResume    = "resume"   // ResumePayload: rebuild a run after a reconnect
	CmdInspect   = "inspect"  // session.InspectRequest: one part's tensor at the current step
	CmdResample  = "resample" // ResamplePayload: the current step under other sampling settings, no forward pass
	// CmdWeightBlock asks for one stored block of a quantized weight matrix
	// (WeightBlockPayload; needs no run): its integers, scales, values and,
	// quantized at load, the original weights and the error.
	CmdWeightBlock = "weight_block"
)

// MaxResumeLog bounds a resume message's command log.
const MaxResumeLog = 4096

// Server → client message types.
const (
	MsgWelcome     = "welcome" // models, limits
	MsgStarted     = "started" // the run's model card and settings
	MsgEvent       = "event"   // one engine stage event
	MsgLogits      = "logits"  // full logit vector
	MsgSamples     = "samples" // sample_n result
	MsgError       = "error"   // {code, message}: the connection stays usable
	MsgPong        = "pong"
	MsgClosing     = "closing"      // the server is shutting down
	MsgResumed     = "resumed"      // a resume's answer: started's fields plus the events to redraw
	MsgInspection  = "inspection"   // an inspect's answer: session.Inspection
	MsgResampled   = "resampled"    // a resample's answer: session.Resampled
	MsgDetail      = "detail"       // {events}: a thinned run's latest full events, before its stop (thin.go)
	MsgEvents      = "events"       // {events}: consecutive thin events of a thinned run, in order (thin.go)
	MsgPaused      = "paused"       // {next, stages}: a run command stopped streaming at pause; the run goes on with the next command
	MsgSamplingSet = "sampling_set" // {sampling, next, logits?, sample?}: set_sampling's answer: the settings now, the current step under them
	MsgWeightBlock = "weight_block" // a weight_block's answer: engine.WeightBlock
)

// Command is a decoded client message.
type Command struct {
	Type    string          `json:"type"`
	ID      int64           `json:"id,omitempty"` // echoed in replies, optional
	Payload json.RawMessage `json:"payload,omitempty"`

	Start   *StartPayload           `json:"-"`
	Resume  *ResumePayload          `json:"-"`
	N       int                     `json:"-"` // rewind / sample_n
	Token   int                     `json:"-"` // force
	Room    *RoomPayload            `json:"-"` // room_* commands (roomproto.go)
	Inspect *session.InspectRequest `json:"-"`
	// Resample is a resample's settings (session.Session.Resample).
	Resample *ResamplePayload `json:"-"`
	// WeightBlock is a weight_block's request.
	WeightBlock *WeightBlockPayload `json:"-"`
	// DetailMs is a run's detail_ms: 0 sends every event in full, N > 0
	// at most one token's heavy detail per N ms (thin.go).
	DetailMs int `json:"-"`
}

// StartPayload sets up a run.
type StartPayload struct {
	Model        string                  `json:"model"`
	Prompt       string                  `json:"prompt"`
	Chat         []tokenizer.ChatMessage `json:"chat"`
	Sampling     *SamplingPayload        `json:"sampling"`
	MaxNewTokens int                     `json:"max_new_tokens"`
	StopStrings  []string                `json:"stop_strings"`
	AddBOS       *bool                   `json:"add_bos"`
	StopAtEOS    *bool                   `json:"stop_at_eos"`
	TopN         int                     `json:"top_n"`
	AllAttention bool                    `json:"all_attention"`
	NoCache      bool                    `json:"no_cache"`
	Lens         bool                    `json:"lens"`
	// KVCache is the KV cache's precision: "f32", "f16" or "bf16" (""
	// the server's, serve --kv-cache).
	KVCache string `json:"kv_cache,omitempty"`
	// NoBatch runs this run's decode steps alone even when the server
	// batches (serve --batch=false for one run: a class request's comparison).
	NoBatch bool `json:"no_batch"`
	// Class marks the run as a student's part of a class request
	// (classrequest.go): its timings go to the room's presenter.
	Class *ClassTag `json:"class,omitempty"`
}

// WeightBlockPayload names one block of a model's weight matrix: the
// model ("" the default), the matrix (engine.WeightMatrices), the layer of
// a projection, the output row and the block along it.
type WeightBlockPayload struct {
	Model string `json:"model"`
	engine.WeightBlockRequest
}

// ResumePayload rebuilds a run on a new connection: the start settings and
// every command that moved the run since, in order.
type ResumePayload struct {
	Start StartPayload `json:"start"`
	Log   []LogEntry   `json:"log"`
}

// LogEntry is one logged command, written compactly as a string:
// "step", "step_token", "run", "cancel", "reset", "rewind N", "force ID"
// or "set_sampling {JSON}" (every setting given, as sampling_set says them).
type LogEntry struct {
	Type     string
	Arg      int              // rewind's n, force's token id
	Sampling *SamplingPayload // set_sampling's settings
}

func (e LogEntry) String() string {
	if e.Type == CmdRewind || e.Type == CmdForce {
		return fmt.Sprintf("%s %d", e.Type, e.Arg)
	}
	if e.Type == CmdSampling && e.Sampling != nil {
		b, _ := json.Marshal(e.Sampling)
		return e.Type + " " + string(b)
	}
	return e.Type
}

// UnmarshalJSON reads the string form.
func (e *LogEntry) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("a log entry is a string such as \"step\" or \"rewind 1\", not %s", b)
	}
	typ, arg, hasArg := strings.Cut(s, " ")
	switch typ {
	case CmdStep, CmdStepToken, CmdRun, CmdCancel, CmdReset:
		if hasArg {
			return fmt.Errorf("log entry %q: %s takes no argument", s, typ)
		}
	case CmdRewind, CmdForce:
		n, err := strconv.Atoi(arg)
		if !hasArg || err != nil {
			return fmt.Errorf("log entry %q: %s needs an integer, as in %q", s, typ, typ+" 1")
		}
		e.Arg = n
	case CmdSampling:
		var p SamplingPayload
		if err := strictUnmarshal([]byte(arg), &p); !hasArg || err != nil || p.Temperature == nil || p.TopK == nil || p.TopP == nil || p.MinP == nil || p.Seed == nil {
			return fmt.Errorf("log entry %q: set_sampling needs every setting as JSON, as in %q", s, `set_sampling {"temperature":1,"top_k":0,"top_p":1,"min_p":0,"seed":42}`)
		}
		e.Sampling = &p
	default:
		return fmt.Errorf("log entry %q: %q cannot be resumed (allowed: step, step_token, run, cancel, reset, rewind N, force ID, set_sampling {settings})", s, typ)
	}
	e.Type = typ
	return nil
}

// SamplingPayload mirrors session.SamplingParams; absent fields take defaults.
type SamplingPayload struct {
	Temperature *float64 `json:"temperature"`
	TopK        *int     `json:"top_k"`
	TopP        *float64 `json:"top_p"`
	MinP        *float64 `json:"min_p"`
	Seed        *uint64  `json:"seed"`
}

// ResamplePayload asks for the current step's distribution and draw under
// other sampling settings; absent fields keep the run's own settings. TopN
// is how many candidates to list (0: the run's top_n).
type ResamplePayload struct {
	SamplingPayload
	TopN int `json:"top_n"`
}

// Sampling returns the settings fields (nil for a nil payload).
func (p *ResamplePayload) Sampling() *SamplingPayload {
	if p == nil {
		return nil
	}
	return &p.SamplingPayload
}

// Over returns s with the fields sp sets replaced (sp may be nil).
func (sp *SamplingPayload) Over(s session.SamplingParams) session.SamplingParams {
	if sp == nil {
		return s
	}
	if sp.Temperature != nil {
		s.Temperature = *sp.Temperature
	}
	if sp.TopK != nil {
		s.TopK = *sp.TopK
	}
	if sp.TopP != nil {
		s.TopP = *sp.TopP
	}
	if sp.MinP != nil {
		s.MinP = *sp.MinP
	}
	if sp.Seed != nil {
		s.Seed = *sp.Seed
	}
	return s
}

// SessionConfig turns a start payload into the engine's settings.
func (p *StartPayload) SessionConfig() session.Config {
	s := p.Sampling.Over(session.DefaultSampling())
	return session.Config{Prompt: p.Prompt, Chat: p.Chat, Sampling: s, MaxNewTokens: p.MaxNewTokens,
		StopStrings: p.StopStrings, AddBOS: p.AddBOS, StopAtEOS: p.StopAtEOS, TopN: p.TopN, AllAttention: p.AllAttention, NoCache: p.NoCache, Lens: p.Lens, KVCache: p.KVCache}
}

// ProtocolError is a bad message: Code is machine-readable, the message says
// what was wrong and what is allowed.
type ProtocolError struct {
	Code string
	Msg  string
}

func (e *ProtocolError) Error() string { return e.Msg }

// AppendEnvelope appends a server message's envelope up to its payload:
// {"type":T,"v":V,"seq":S and ,"id":I when id is not 0. The one encoder
// of the envelope: a connection's replies (conn.go), a room's fan-out
// frames (roomview.go) and refusals all start with it; the payload and
// the closing brace follow.
func AppendEnvelope(b []byte, typ string, seq, id int64) []byte {
	b = append(b, `{"type":`...)
	b = strconv.AppendQuote(b, typ)
	b = append(b, `,"v":`...)
	b = strconv.AppendInt(b, ProtocolVersion, 10)
	b = append(b, `,"seq":`...)
	b = strconv.AppendInt(b, seq, 10)
	if id != 0 {
		b = append(b, `,"id":`...)
		b = strconv.AppendInt(b, id, 10)
	}
	return b
}

// CodeOf is err's code and message for the client: a ProtocolError's own,
// anything else internal with its text.
func CodeOf(err error) (code, msg string) {
	if pe := (*ProtocolError)(nil); errors.As(err, &pe) {
		return pe.Code, pe.Msg
	}
	return CodeInternal, "internal error: " + err.Error()
}

func protoErr(code, format string, args ...any) error {
	return &ProtocolError{Code: code, Msg: fmt.Sprintf(format, args...)}
}

var commandTypes = append([]string{CmdHello, CmdStart, CmdResume, CmdStep, CmdStepToken, CmdRun, CmdCancel, CmdPause, CmdSampling, CmdRewind, CmdForce, CmdReset, CmdLogits, CmdSampleN, CmdPing, CmdInspect, CmdResample, CmdWeightBlock}, roomCommandTypes...)

// DecodeCommand parses and checks one client message. Unknown types,
// unknown fields, wrong field types and invalid UTF-8 are errors that say
// what was wrong.
func DecodeCommand(b []byte) (Command, error) {
	var c Command
	if !utf8.Valid(b) {
		return c, protoErr(CodeBadJSON, "message is not valid UTF-8")
	}
	if err := strictUnmarshal(b, &c); err != nil {
		return c, protoErr(CodeBadJSON, "message is not a JSON object {type, id?, payload?}: %s", describeJSONError(err))
	}
	known := false
	for _, t := range commandTypes {
		known = known || t == c.Type
	}
	if !known {
		return c, protoErr(CodeUnknownType, "unknown message type %q (allowed: %s)", c.Type, strings.Join(commandTypes, ", "))
	}
	payload := c.Payload
	if len(payload) == 0 || string(payload) == "null" {
		payload = []byte("{}")
	}
	switch c.Type {
	case CmdHello:
		var p struct {
			Version int `json:"version"`
		}
		if err := strictUnmarshal(payload, &p); err != nil {
			return c, protoErr(CodeBadPayload, "hello payload: %s", describeJSONError(err))
		}
		if p.Version != ProtocolVersion {
			return c, protoErr(CodeBadVersion, "protocol version %d is not supported (this server speaks %d)", p.Version, ProtocolVersion)
		}
	case CmdStart:
		var p StartPayload
		if err := strictUnmarshal(payload, &p); err != nil {
			return c, protoErr(CodeBadPayload, "start payload: %s", describeJSONError(err))
		}
		c.Start = &p
	case CmdResume:
		var raw struct {
			Start *json.RawMessage  `json:"start"`
			Log   []json.RawMessage `json:"log"`
		}
		if err := strictUnmarshal(payload, &raw); err != nil {
			return c, protoErr(CodeBadPayload, "resume payload: %s", describeJSONError(err))
		}
		if raw.Start == nil {
			return c, protoErr(CodeBadPayload, "resume payload needs start (the start settings of the run to rebuild)")
		}
		if len(raw.Log) > MaxResumeLog {
			return c, protoErr(CodeBadPayload, "resume log has %d entries; the limit is %d: start a new run instead", len(raw.Log), MaxResumeLog)
		}
		p := &ResumePayload{Log: make([]LogEntry, len(raw.Log))}
		if err := strictUnmarshal(*raw.Start, &p.Start); err != nil {
			return c, protoErr(CodeBadPayload, "resume start: %s", describeJSONError(err))
		}
		for i, e := range raw.Log {
			if err := p.Log[i].UnmarshalJSON(e); err != nil {
				return c, protoErr(CodeBadPayload, "resume log entry %d: %v", i, err)
			}
		}
		c.Resume = p
	case CmdRewind, CmdSampleN:
		var p struct {
			N *int `json:"n"`
		}
		if err := strictUnmarshal(payload, &p); err != nil {
			return c, protoErr(CodeBadPayload, "%s payload: %s", c.Type, describeJSONError(err))
		}
		if p.N == nil {
			return c, protoErr(CodeBadPayload, "%s payload needs n (a positive integer)", c.Type)
		}
		c.N = *p.N
	case CmdForce:
		var p struct {
			ID *int `json:"id"`
		}
		if err := strictUnmarshal(payload, &p); err != nil {
			return c, protoErr(CodeBadPayload, "force payload: %s", describeJSONError(err))
		}
		if p.ID == nil {
			return c, protoErr(CodeBadPayload, "force payload needs id (a token id)")
		}
		c.Token = *p.ID
	case CmdRoomOpen, CmdRoomClaim, CmdRoomClose, CmdRoomPoll, CmdRoomReveal, CmdRoomRecall, CmdRoomPage, CmdRoomRemove, CmdRoomClass, CmdRoomVote, CmdRoomBranch, CmdRoomFollow:
		if err := decodeRoomPayload(&c, payload); err != nil {
			return c, err
		}
	case CmdInspect:
		var p session.InspectRequest
		if err := strictUnmarshal(payload, &p); err != nil {
			return c, protoErr(CodeBadPayload, "inspect payload: %s", describeJSONError(err))
		}
		c.Inspect = &p
	case CmdRun:
		var p struct {
			DetailMs *int `json:"detail_ms"`
		}
		if err := strictUnmarshal(payload, &p); err != nil {
			return c, protoErr(CodeBadPayload, "run payload: %s (allowed: {} or {\"detail_ms\": 0 to %d})", describeJSONError(err), MaxDetailMs)
		}
		if p.DetailMs != nil {
			if *p.DetailMs < 0 || *p.DetailMs > MaxDetailMs {
				return c, protoErr(CodeBadPayload, "run payload: detail_ms %d is out of range: allowed 0 (every event in full) to %d milliseconds", *p.DetailMs, MaxDetailMs)
			}
			c.DetailMs = *p.DetailMs
		}
	case CmdResample:
		var p ResamplePayload
		if err := strictUnmarshal(payload, &p); err != nil {
			return c, protoErr(CodeBadPayload, "resample payload: %s", describeJSONError(err))
		}
		c.Resample = &p
	case CmdWeightBlock:
		var p WeightBlockPayload
		if err := strictUnmarshal(payload, &p); err != nil {
			return c, protoErr(CodeBadPayload, "weight_block payload: %s (allowed: {\"model\", \"matrix\", \"layer\", \"row\", \"block\"})", describeJSONError(err))
		}
		if !slices.Contains(engine.WeightMatrices, p.Matrix) {
			return c, protoErr(CodeBadPayload, "weight_block payload: matrix %q is not one of %s", p.Matrix, strings.Join(engine.WeightMatrices, ", "))
		}
		if p.Layer < 0 || p.Row < 0 || p.Block < 0 {
			return c, protoErr(CodeBadPayload, "weight_block payload: layer, row and block count from 0 (got %d, %d, %d)", p.Layer, p.Row, p.Block)
		}
		c.WeightBlock = &p
	case CmdSampling:
		var p SamplingPayload
		if err := strictUnmarshal(payload, &p); err != nil {
			return c, protoErr(CodeBadPayload, "set_sampling payload: %s", describeJSONError(err))
		}
		c.Resample = &ResamplePayload{SamplingPayload: p}
	default:
		var p struct{}
		if err := strictUnmarshal(payload, &p); err != nil {
			return c, protoErr(CodeBadPayload, "%s takes no payload fields: %s", c.Type, describeJSONError(err))
		}
	}
	return c, nil
}

func strictUnmarshal(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return errors.New("trailing data after the JSON value")
	}
	return nil
}

// describeJSONError names the field and the expected type where it can.
func describeJSONError(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		field := jsonPath(te.Field)
		if field == "" {
			field = "the message"
		}
		return fmt.Sprintf("field %q has a %s, want %s", field, te.Value, jsonTypeName(te.Type.String()))
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Sprintf("invalid JSON at byte %d: %v", se.Offset, se)
	}
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return "invalid JSON: the message ends too early"
	}
	return err.Error()
}

// jsonPath is an UnmarshalTypeError's field path as the client wrote it:
// encoding/json names an embedded struct by its Go type (for example
// "SamplingPayload.temperature" in a resample payload), which is not a
// field of the message. The protocol's JSON names are lower case, so the
// path's capitalised parts are those Go names.
func jsonPath(field string) string {
	parts := strings.Split(field, ".")
	keep := parts[:0]
	for _, p := range parts {
		if p != "" && !unicode.IsUpper(rune(p[0])) {
			keep = append(keep, p)
		}
	}
	return strings.Join(keep, ".")
}

func jsonTypeName(goType string) string {
	switch {
	case strings.Contains(goType, "int"):
		return "an integer"
	case strings.Contains(goType, "float"):
		return "a number"
	case strings.Contains(goType, "string"):
		return "a string"
	case strings.Contains(goType, "bool"):
		return "true or false"
	case strings.HasPrefix(goType, "[]") || strings.HasPrefix(goType, "*[]"):
		return "a list"
	}
	return "an object"
}

// ServerMsg is one server → client message.
type ServerMsg struct {
	Type    string `json:"type"`
	V       int    `json:"v"`
	Seq     int64  `json:"seq"`          // per-connection message counter, strictly increasing
	ID      int64  `json:"id,omitempty"` // the command it answers
	Payload any    `json:"payload,omitempty"`
}

// ErrorPayload is an error reply.
type ErrorPayload struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	// RetryAfterMs is when a refused request may be sent again (byte_budget:
	// the visitor's budget is back out of debt then); 0 when the error is not
	// a matter of waiting.
	RetryAfterMs int64 `json:"retry_after_ms,omitempty"`
}

// MaxDetailMs bounds a run's detail_ms.
const MaxDetailMs = 60000

// MarshalJSON writes log entries in their string form.
func (e LogEntry) MarshalJSON() ([]byte, error) { return json.Marshal(e.String()) }
