// The web tests' entry point: the room benchmark's client processes, and
// how many browser tests run at once.
package web

import (
	"flag"
	"os"
	"runtime"
	"strconv"
	"testing"
)

func TestMain(m *testing.M) {
	if spec := os.Getenv(roomClientsEnv); spec != "" {
		os.Exit(roomClientsMain(spec))
	}
	browserParallel()
	os.Exit(m.Run())
}

// browserParallel runs this package's parallel tests browserTests at a
// time unless -parallel says otherwise: they are browser tests, which
// spend most of their time waiting for a page to draw or a server to
// answer, so the default (GOMAXPROCS: 2 on the development machine)
// leaves the CPUs idle.
func browserParallel() {
	flag.Parse()
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if !set {
		flag.Set("test.parallel", strconv.Itoa(max(browserTests, runtime.GOMAXPROCS(0))))
	}
}

// browserTests is how many parallel tests run at once by default.
const browserTests = 4
