package room

// roomcode_internal_test.go: a mistyped class code is told what is wrong
// with it.

import (
	"strings"
	"testing"

	"github.com/inferscope/inferscope/web/wire"
)

// TestCodeProblem: a wrong class code is told what is wrong with it and
// which characters codes never use (the message used to cite "ABC234").
func TestCodeProblem(t *testing.T) {
	cases := []struct {
		typed string
		want  []string
	}{
		{"", []string{"type the class code", "never 0, O, 1, I or L"}},
		{wire.NormalizeCode("ab c1-0d"), []string{`"ABC10D" has 1, 0`, "never 0, O, 1, I or L"}},
		{"ABCDE", []string{`"ABCDE" has 5 characters`, "6 characters"}},
		{"LOOKED", []string{`"LOOKED" has L, O`}},
	}
	for _, c := range cases {
		got := wire.CodeProblem(c.typed)
		for _, w := range c.want {
			if !strings.Contains(got, w) {
				t.Errorf("codeProblem(%q) = %q, want it to say %q", c.typed, got, w)
			}
		}
	}
	if !wire.ValidRoomCode(wire.NormalizeCode(" abc-234 ")) || strings.ContainsAny(wire.RoomCodeAlphabet, "0O1IL") {
		t.Error("a typed code is read in upper case without spaces or dashes, and the alphabet has no look-alikes")
	}
}
