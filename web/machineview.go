package web

// machineview.go: /api/machine, read only: this machine's measured memory
// read bandwidth (the streaming-read probe `inferscope bench` uses,
// internal/enginebench), its threads and its memory, for the serving
// lesson's arithmetic (decode tokens/s bound = bandwidth ÷ bytes read per
// token). Two buffer sizes: one the size of the live model's weights (what
// its decode reads, which may sit in the processor's caches) and one of
// 256 MiB (what a model of gigabytes is read from). The probe runs at most
// one at a time and its answer is kept for a few seconds, so a class
// opening the lesson together costs one measurement. ?probe=model measures
// the model-sized buffer alone, afresh (a few milliseconds): the lesson
// takes one beside each decode run it compares with the bound.

import (
	"bufio"
	"net/http"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/inferscope/inferscope/internal/enginebench"
)

// machineProbeRuns is how many times each buffer is read; the answer gives
// the best and the median run.
const (
	machineProbeRuns  = 7
	machineLargeBytes = 256 << 20
	machineMinBytes   = 1 << 20
	machineMaxSmall   = 64 << 20
	machineKeep       = 5 * time.Second
)

// Bandwidth is one buffer's probe: bytes/second of its best and median run.
type Bandwidth struct {
	Bytes         int     `json:"bytes"`
	BestGBps      float64 `json:"best_GB_per_s"`
	MedianGBps    float64 `json:"median_GB_per_s"`
	Runs          int     `json:"runs"`
	MeasuredAgoMs float64 `json:"measured_ago_ms"`
}

// MachineView is the /api/machine answer.
type MachineView struct {
	Threads     int       `json:"threads"` // GOMAXPROCS: the engine's worker threads
	Probe       string    `json:"probe"`   // the loads the probe uses (avx512, avx2, go)
	ModelSized  Bandwidth `json:"model_sized"`
	Large       Bandwidth `json:"large"`
	MemoryTotal int64     `json:"memory_total_bytes"` // 0 where unknown
	WeightsLive int64     `json:"weights_bytes"`      // the default model's weights
}

type probeResult struct {
	bw Bandwidth
	at time.Time
}

// machineProbes keeps the last probe of each buffer size.
var machineProbes struct {
	mu   sync.Mutex
	last map[int]probeResult
}

func probeBandwidth(bytes int, fresh bool) Bandwidth {
	machineProbes.mu.Lock()
	defer machineProbes.mu.Unlock()
	if r, ok := machineProbes.last[bytes]; ok && !fresh && time.Since(r.at) < machineKeep {
		bw := r.bw
		bw.MeasuredAgoMs = float64(time.Since(r.at).Microseconds()) / 1000
		return bw
	}
	runs := enginebench.ReadBandwidthRuns(bytes, 0, machineProbeRuns)
	slices.Sort(runs)
	bw := Bandwidth{Bytes: bytes, BestGBps: runs[len(runs)-1] / 1e9, MedianGBps: runs[len(runs)/2] / 1e9, Runs: len(runs)}
	if machineProbes.last == nil {
		machineProbes.last = map[int]probeResult{}
	}
	machineProbes.last[bytes] = probeResult{bw, time.Now()}
	return bw
}

// memTotal reads MemTotal from /proc/meminfo (Linux); 0 elsewhere.
func memTotal() int64 {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "MemTotal:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err == nil {
				return kb << 10
			}
		}
	}
	return 0
}

// initMachineView adds /api/machine.
func (s *Server) initMachineView() {
	s.echo.GET("/api/machine", func(c echo.Context) error {
		// read by the lesson's own script: refuse other sites' pages
		if site := c.Request().Header.Get("Sec-Fetch-Site"); site == "cross-site" {
			return echo.NewHTTPError(http.StatusForbidden, "the machine view is readable from this site's pages only")
		}
		v := MachineView{Threads: runtime.GOMAXPROCS(0), Probe: enginebench.ReadProbe(), MemoryTotal: memTotal()}
		for _, m := range s.models() {
			if m.Default || v.WeightsLive == 0 {
				v.WeightsLive = m.WeightsBytes
			}
		}
		// the model-sized buffer rounded to a MiB, so one size is kept and shared
		small := min(max(int(v.WeightsLive+(1<<20)-1)&^(1<<20-1), machineMinBytes), machineMaxSmall)
		if c.QueryParam("probe") == "model" {
			v.ModelSized = probeBandwidth(small, true)
		} else {
			v.ModelSized = probeBandwidth(small, false)
			v.Large = probeBandwidth(machineLargeBytes, false)
		}
		c.Response().Header().Set("Cache-Control", "no-store")
		return c.JSON(http.StatusOK, v)
	})
}
