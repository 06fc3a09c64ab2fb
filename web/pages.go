package web

// pages.go: the lab, compare and home pages.

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/inferscope/inferscope/engine/session"
	"github.com/inferscope/inferscope/web/catalog"
	"github.com/inferscope/inferscope/web/views"
)

func (s *Server) models() []catalog.ModelCard {
	if s.opts.Catalog == nil {
		return nil
	}
	return s.opts.Catalog.Models()
}

func (s *Server) pageData() views.LabData {
	d := session.DefaultSampling()
	return views.LabData{
		Models: s.models(),
		Defaults: views.LabDefaults{Prompt: "The President said", Temperature: d.Temperature, TopK: d.TopK, TopP: d.TopP, MinP: d.MinP,
			Seed: d.Seed, MaxNewTokens: 32},
		Limits: views.LabLimits{MaxPromptBytes: session.MaxPromptBytes, MaxStopStrings: session.MaxStopStrings, MaxSampleN: session.MaxSampleMany},
	}
}

func (s *Server) lab(c echo.Context) error {
	return render(c, http.StatusOK, views.Lab(s.pageData()))
}

func (s *Server) compare(c echo.Context) error {
	return render(c, http.StatusOK, views.Compare(s.pageData()))
}

func (s *Server) apiModels(c echo.Context) error {
	return c.JSON(http.StatusOK, map[string]any{"models": s.models()})
}
