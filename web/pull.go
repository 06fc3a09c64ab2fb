package web

// pull.go: POST /api/pull and its status: model downloads from the lab.

import (
	"net/http"

	"github.com/labstack/echo/v4"
)

// PullStatus is the state of the server's model download.
type PullStatus struct {
	Repo   string   `json:"repo"`
	State  string   `json:"state"` // idle, running, done, error
	File   string   `json:"file"`
	Done   int64    `json:"done"`
	Total  int64    `json:"total"`
	Rate   float64  `json:"bytes_per_s"`
	ETA    float64  `json:"eta_s"`
	Error  string   `json:"error,omitempty"`
	Model  string   `json:"model,omitempty"` // the loaded model's name when done
	Cached []string `json:"cached"`
}

// Puller downloads models for the lab's "get more models" panel.
type Puller interface {
	Presets() any
	Start(repo string) error
	Status() PullStatus
}

func (s *Server) pullStatus(c echo.Context) error {
	if s.opts.Puller == nil {
		return echo.NewHTTPError(http.StatusNotFound, "downloads are disabled on this server")
	}
	return c.JSON(http.StatusOK, map[string]any{"presets": s.opts.Puller.Presets(), "status": s.opts.Puller.Status()})
}

func (s *Server) pullStart(c echo.Context) error {
	if s.opts.Puller == nil {
		return echo.NewHTTPError(http.StatusNotFound, "downloads are disabled on this server")
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
