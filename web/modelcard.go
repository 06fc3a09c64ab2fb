package web

// modelcard.go: model card pages — /models/NAME/card renders a model's
// MODEL_CARD.md, /models/NAME/FILE serves the images it links.

import (
	"bytes"
	"fmt"
	"io/fs"
	"net/http"
	"path"

	"github.com/labstack/echo/v4"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"

	"github.com/inferscope/inferscope/web/views"
)

// modelDocs is what a Catalog offers when some of its models have a card
// page (EngineCatalog does).
type modelDocs interface {
	ModelDocs(name string) (fs.FS, bool)
}

// cardMarkdown renders model cards: GitHub tables, no raw HTML (the card is
// our own file, but nothing in it needs HTML).
var cardMarkdown = goldmark.New(goldmark.WithExtensions(extension.Table))

func (s *Server) docsFor(name string) (fs.FS, error) {
	md, ok := s.opts.Catalog.(modelDocs)
	if !ok {
		return nil, echo.NewHTTPError(http.StatusNotFound, "no model cards are installed")
	}
	d, ok := md.ModelDocs(name)
	if !ok {
		return nil, echo.NewHTTPError(http.StatusNotFound, fmt.Sprintf("model %q has no card page", name))
	}
	return d, nil
}

func (s *Server) modelCardPage(c echo.Context) error {
	name := c.Param("name")
	d, err := s.docsFor(name)
	if err != nil {
		return err
	}
	src, err := fs.ReadFile(d, "MODEL_CARD.md")
	if err != nil {
		return err
	}
	var html bytes.Buffer
	if err := cardMarkdown.Convert(src, &html); err != nil {
		return err
	}
	return render(c, http.StatusOK, views.ModelCardPage(views.ModelCardPageData{Name: name, HTML: html.String()}))
}

// modelCardFile serves the card's images (SVG only: nothing else is linked).
func (s *Server) modelCardFile(c echo.Context) error {
	file := c.Param("file")
	if path.Ext(file) != ".svg" || !fs.ValidPath(file) {
		return echo.NewHTTPError(http.StatusNotFound, "model card files are .svg images")
	}
	d, err := s.docsFor(c.Param("name"))
	if err != nil {
		return err
	}
	b, err := fs.ReadFile(d, file)
	if err != nil {
		return echo.NewHTTPError(http.StatusNotFound, fmt.Sprintf("model card file %q not found", file))
	}
	c.Response().Header().Set("Cache-Control", "no-cache")
	return c.Blob(http.StatusOK, "image/svg+xml", b)
}
