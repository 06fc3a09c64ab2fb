package web

// pull.go: model downloads from the lab: GET /api/pull (presets and
// status), POST /api/pull (start), DELETE /api/pull (cancel). Downloads are
// an operator's choice: without serve --allow-pull there is no Puller and
// every route answers 404.

import (
	"net/http"

	"github.com/labstack/echo/v4"
)

// PullStatus is the state of the server's model download.
type PullStatus struct {
	Repo   string   `json:"repo"`
	State  string   `json:"state"` // idle, running, done, error, cancelled
	File   string   `json:"file"`
	Done   int64    `json:"done"`
	Total  int64    `json:"total"`
	Rate   float64  `json:"bytes_per_s"`
	ETA    float64  `json:"eta_s"`
	Error  string   `json:"error,omitempty"`
	Model  string   `json:"model,omitempty"` // the loaded model's name when done
	Cached []string `json:"cached"`          // offered repos already in the cache
}

// Puller downloads models for the lab's "get more models" panel, one at a
// time. Its errors and status name repos, never server paths.
type Puller interface {
	Presets() any
	Start(repo string) error
	Status() PullStatus
	// Cancel stops the running download (an error if none runs).
	Cancel() error
}

const pullsOff = "downloads are disabled on this server (the operator can allow them with serve --allow-pull)"

func (s *Server) pullStatus(c echo.Context) error {
	if s.opts.Puller == nil {
		return echo.NewHTTPError(http.StatusNotFound, pullsOff)
	}
	return c.JSON(http.StatusOK, map[string]any{"presets": s.opts.Puller.Presets(), "status": s.opts.Puller.Status()})
}

func (s *Server) pullStart(c echo.Context) error {
	if s.opts.Puller == nil {
		return echo.NewHTTPError(http.StatusNotFound, pullsOff)
	}
	var req struct {
		Repo string `json:"repo"`
	}
	if err := c.Bind(&req); err != nil {
		return echo.NewHTTPError(http.StatusBadRequest, "want a JSON body {\"repo\": \"org/name\"}")
	}
	if err := s.opts.Puller.Start(req.Repo); err != nil {
		return echo.NewHTTPError(http.StatusBadRequest, err.Error())
	}
	return c.JSON(http.StatusAccepted, s.opts.Puller.Status())
}

func (s *Server) pullCancel(c echo.Context) error {
	if s.opts.Puller == nil {
		return echo.NewHTTPError(http.StatusNotFound, pullsOff)
	}
	if err := s.opts.Puller.Cancel(); err != nil {
		return echo.NewHTTPError(http.StatusConflict, err.Error())
	}
	return c.JSON(http.StatusOK, s.opts.Puller.Status())
}
