package wire

// roomcode.go: class codes and network ids as the protocol checks them:
// a code's alphabet and length, what to tell a student who mistyped one,
// and the presenter's anonymous network ids.

import (
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
)

// Join codes: 6 characters without look-alikes (no 0/O, 1/I/L).
const (
	RoomCodeLen      = 6
	RoomCodeAlphabet = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"
)

func ValidRoomCode(s string) bool {
	if len(s) != RoomCodeLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		if strings.IndexByte(RoomCodeAlphabet, s[i]) < 0 {
			return false
		}
	}
	return true
}

// CodeProblem says what is wrong with a typed class code and what codes
// look like: the characters it has that codes never use, or its length.
func CodeProblem(typed string) string {
	var bad []string
	for _, r := range typed {
		if s := string(r); !strings.Contains(RoomCodeAlphabet, s) && !slices.Contains(bad, s) {
			bad = append(bad, s)
		}
	}
	what := fmt.Sprintf("a class code is %d characters: letters A–Z and digits 2–9, never 0, O, 1, I or L (they look alike)", RoomCodeLen)
	switch {
	case typed == "":
		return "type the class code: " + what
	case len(bad) > 0:
		return fmt.Sprintf("%q has %s, which class codes never use: %s", typed, strings.Join(bad, ", "), what)
	case len(typed) != RoomCodeLen:
		return fmt.Sprintf("%q has %d characters: %s", typed, len(typed), what)
	}
	return what
}

// NormalizeCode accepts what a student types: lower case, spaces, dashes.
func NormalizeCode(s string) string {
	return strings.ToUpper(strings.NewReplacer(" ", "", "-", "").Replace(strings.TrimSpace(s)))
}

func ValidNetworkID(s string) bool {
	if len(s) != 2*NetworkIDBytes {
		return false
	}
	_, err := hex.DecodeString(s)
	return err == nil && s == strings.ToLower(s)
}

// networkIDBytes is the length of a network id, before hex.
const NetworkIDBytes = 4
