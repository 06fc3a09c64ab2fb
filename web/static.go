package web

// static.go: static assets: embedded files with content hashes and cache headers.

import (
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"strings"

	"github.com/labstack/echo/v4"
)

// assetStore serves the embedded static tree with strong ETags and cache
// headers. Files are read once at start-up; they never change at run time.
type assetStore struct {
	files map[string]asset
}

type asset struct {
	body  []byte
	etag  string
	ctype string
}

func newAssetStore(fsys fs.FS) (*assetStore, error) {
	st := &assetStore{files: map[string]asset{}}
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(fsys, p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(b)
		ct := mime.TypeByExtension(path.Ext(p))
		if ct == "" {
			ct = "application/octet-stream"
		}
		st.files[p] = asset{body: b, etag: `"` + hex.EncodeToString(sum[:8]) + `"`, ctype: ct}
		return nil
	})
	return st, err
}

// static serves /static/<path>. Unknown or traversing paths are 404s: lookups
// go through a map of the embedded files, never the file system.
func (s *Server) static(c echo.Context) error {
	p := strings.TrimPrefix(c.Param("*"), "/")
	a, ok := s.assets.files[p]
	if !ok || strings.HasSuffix(p, ".go") {
		return echo.NewHTTPError(http.StatusNotFound, "no such asset")
	}
	h := c.Response().Header()
	h.Set("ETag", a.etag)
	// Short max-age plus ETag revalidation: a new binary's assets show up
	// within minutes, and unchanged ones cost a 304.
	h.Set("Cache-Control", "public, max-age=300, must-revalidate")
	if match := c.Request().Header.Get("If-None-Match"); match == a.etag {
		return c.NoContent(http.StatusNotModified)
	}
	return c.Blob(http.StatusOK, a.ctype, a.body)
}
