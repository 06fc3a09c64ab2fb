package web

// static.go: static assets: embedded files with content hashes, cache
// headers, and gzip bodies made once at start-up.

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"strconv"
	"strings"
	"sync"

	"github.com/labstack/echo/v4"

	"github.com/inferscope/inferscope/static"
)

// assetStore serves the embedded static tree with strong ETags and cache
// headers. Files are read once at start-up; they never change at run time.
type assetStore struct {
	files map[string]asset
}

type asset struct {
	body  []byte
	gz    []byte // gzip of body; nil when that is not smaller
	etag  string
	ctype string
}

// gzipped compresses b at the best level, or returns nil when that does
// not save bytes (images, tiny files).
func gzipped(b []byte) []byte {
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	zw.Write(b)
	zw.Close()
	if buf.Len() >= len(b) {
		return nil
	}
	return buf.Bytes()
}

// embeddedAssets is the store of the embedded tree, built once a process
// (compressing every file at the best level takes ~35 ms) and shared, read
// only, by every Server in it.
var embeddedAssets = sync.OnceValues(func() (*assetStore, error) { return newAssetStore(static.FS) })

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
		st.files[p] = asset{body: b, gz: gzipped(b), etag: hex.EncodeToString(sum[:8]), ctype: ct}
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
	body, etag := a.body, `"`+a.etag+`"`
	h.Set("Vary", "Accept-Encoding")
	if a.gz != nil && acceptsGzip(c.Request().Header.Get("Accept-Encoding")) {
		body, etag = a.gz, `"`+a.etag+`-gz"`
		h.Set("Content-Encoding", "gzip")
	}
	h.Set("ETag", etag)
	// Short max-age plus ETag revalidation: a new binary's assets show up
	// within minutes, and unchanged ones cost a 304.
	h.Set("Cache-Control", "public, max-age=300, must-revalidate")
	if match := c.Request().Header.Get("If-None-Match"); match == etag {
		h.Del("Content-Encoding")
		return c.NoContent(http.StatusNotModified)
	}
	return c.Blob(http.StatusOK, a.ctype, body)
}

// acceptsGzip reports whether an Accept-Encoding header allows gzip.
func acceptsGzip(ae string) bool {
	for _, part := range strings.Split(ae, ",") {
		name, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		if name = strings.TrimSpace(name); !strings.EqualFold(name, "gzip") && name != "*" {
			continue
		}
		q, ok := strings.CutPrefix(strings.TrimSpace(params), "q=")
		if !ok {
			return true
		}
		v, err := strconv.ParseFloat(q, 64)
		return err == nil && v > 0
	}
	return false
}
