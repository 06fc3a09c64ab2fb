package wire

// protocol_test.go: strict decoding of client commands, with a fuzz target.

import (
	"errors"
	"strings"
	"testing"
)

func TestDecodeCommand(t *testing.T) {
	tests := []struct {
		name, msg, code, want string
	}{
		{"step", `{"type":"step"}`, "", ""},
		{"start", `{"type":"start","payload":{"prompt":"hi","max_new_tokens":5,"sampling":{"temperature":0.5}}}`, "", ""},
		{"malformed", `{"type":`, "bad_json", "invalid JSON"},
		{"not object", `[1,2]`, "bad_json", "not a JSON object"},
		{"unknown type", `{"type":"explode"}`, "unknown_type", `unknown message type "explode" (allowed: hello, start`},
		{"wrong field type", `{"type":"start","payload":{"prompt":42}}`, "bad_payload", `field "prompt" has a number, want a string`},
		{"wrong nested type", `{"type":"start","payload":{"sampling":{"temperature":"hot"}}}`, "bad_payload", `field "sampling.temperature" has a string, want a number`},
		{"unknown field", `{"type":"start","payload":{"promt":"x"}}`, "bad_payload", `unknown field "promt"`},
		{"rewind without n", `{"type":"rewind"}`, "bad_payload", "needs n"},
		{"force wrong type", `{"type":"force","payload":{"id":"x"}}`, "bad_payload", `field "id" has a string`},
		{"payload on step", `{"type":"step","payload":{"x":1}}`, "bad_payload", "takes no payload fields"},
		{"bad version", `{"type":"hello","payload":{"version":9}}`, "bad_version", "version 9 is not supported"},
		{"invalid utf8", "{\"type\":\"step\xff\"}", "bad_json", "not valid UTF-8"},
		{"trailing", `{"type":"step"} {"type":"step"}`, "bad_json", "trailing data"},
		{"resample", `{"type":"resample","payload":{"temperature":1.2,"top_k":5,"top_p":0.9,"min_p":0.05,"seed":7,"top_n":12}}`, "", ""},
		{"resample empty", `{"type":"resample"}`, "", ""},
		{"resample wrong type", `{"type":"resample","payload":{"top_p":"most"}}`, "bad_payload", `resample payload: field "top_p" has a string, want a number`},
		{"resample unknown field", `{"type":"resample","payload":{"temp":1}}`, "bad_payload", `unknown field "temp"`},
		{"run", `{"type":"run"}`, "", ""},
		{"run detail_ms", `{"type":"run","payload":{"detail_ms":250}}`, "", ""},
		{"run detail_ms 0", `{"type":"run","payload":{"detail_ms":0}}`, "", ""},
		{"run detail_ms negative", `{"type":"run","payload":{"detail_ms":-5}}`, "bad_payload", "detail_ms -5 is out of range: allowed 0 (every event in full) to 60000 milliseconds"},
		{"run detail_ms too big", `{"type":"run","payload":{"detail_ms":60001}}`, "bad_payload", "detail_ms 60001 is out of range"},
		{"run detail_ms fraction", `{"type":"run","payload":{"detail_ms":2.5}}`, "bad_payload", `run payload: field "detail_ms" has a number 2.5, want an integer (allowed: {} or {"detail_ms": 0 to 60000})`},
		{"run detail_ms string", `{"type":"run","payload":{"detail_ms":"fast"}}`, "bad_payload", `field "detail_ms" has a string, want an integer`},
		{"run unknown field", `{"type":"run","payload":{"detail":1}}`, "bad_payload", `unknown field "detail"`},
		{"resample negative seed", `{"type":"resample","payload":{"seed":-1}}`, "bad_payload", `field "seed" has a number`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := DecodeCommand([]byte(tt.msg))
			if tt.code == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			var pe *ProtocolError
			if !errors.As(err, &pe) || pe.Code != tt.code || !strings.Contains(pe.Msg, tt.want) {
				t.Fatalf("err %v, want code %s containing %q", err, tt.code, tt.want)
			}
		})
	}
}

func FuzzDecodeCommand(f *testing.F) {
	for _, s := range []string{`{"type":"step"}`, `{"type":"start","payload":{"prompt":"x","sampling":{"top_p":0.9}}}`, `{"type":"rewind","payload":{"n":2}}`, `{}`, `null`,
		`{"type":"resample","payload":{"temperature":0.7,"top_k":3,"min_p":0.1,"top_n":5}}`, `{"type":"resample","payload":null}`, `{"type":"run","payload":{"detail_ms":250}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := DecodeCommand(b)
		if err != nil {
			var pe *ProtocolError
			if !errors.As(err, &pe) || pe.Msg == "" {
				t.Fatalf("error without a protocol code: %v", err)
			}
			return
		}
		if c.Type == CmdStart && c.Start == nil {
			t.Fatal("start without payload struct")
		}
		if c.Type == CmdResample && c.Resample == nil {
			t.Fatal("resample without payload struct")
		}
	})
}
