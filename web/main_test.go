// The web tests' entry point: the room benchmark's client processes.
package web

import (
	"os"
	"testing"
)

func TestMain(m *testing.M) {
	if spec := os.Getenv(roomClientsEnv); spec != "" {
		os.Exit(roomClientsMain(spec))
	}
	os.Exit(m.Run())
}
