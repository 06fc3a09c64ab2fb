// Package hub downloads models from the Hugging Face hub (or any server
// speaking its file protocol) into the huggingface_hub cache layout, so
// models fetched here and models fetched by Python tools share one cache:
//
//	$HF_HOME/hub/models--org--name/blobs/<etag>           file contents
//	$HF_HOME/hub/models--org--name/snapshots/<commit>/<f> → ../../blobs/<etag>
//	$HF_HOME/hub/models--org--name/refs/<revision>        the commit hash
//
// Downloads resume with Range requests, are checked against the size and
// the etag (sha256 for LFS files, git blob sha1 otherwise), and are renamed
// into place only when complete: the cache never holds a half-written file.
package hub

import (
	"context"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// DefaultEndpoint is used when HF_ENDPOINT is unset.
const DefaultEndpoint = "https://huggingface.co"

// Preset is a curated model with its approximate download size.
type Preset struct {
	Repo  string `json:"repo"`
	Bytes int64  `json:"bytes"` // approximate total download
	About string `json:"about"`
	Chat  bool   `json:"chat"`
	// Arch is the config.json model_type the engine needs to run it.
	Arch string `json:"arch"`
	// Licence names the model's licence; Gated ones must be accepted on
	// the hub by the account whose HF_TOKEN downloads them.
	Licence string `json:"licence"`
	Gated   bool   `json:"gated,omitempty"`
}

// Presets are the curated models: small enough for a laptop, each in an
// architecture the engine implements (Arch).
var Presets = []Preset{
	{Repo: "openai-community/gpt2", Bytes: 551 << 20, About: "GPT-2 small, 124M parameters (OpenAI, 2019)", Arch: "gpt2", Licence: "MIT"},
	{Repo: "distilbert/distilgpt2", Bytes: 357 << 20, About: "DistilGPT2, 82M parameters, distilled from GPT-2", Arch: "gpt2", Licence: "Apache-2.0"},
	{Repo: "HuggingFaceTB/SmolLM2-135M", Bytes: 273 << 20, About: "SmolLM2 135M base (Llama architecture, GQA, bf16)", Arch: "llama", Licence: "Apache-2.0"},
	{Repo: "HuggingFaceTB/SmolLM2-135M-Instruct", Bytes: 273 << 20, About: "SmolLM2 135M instruct, ChatML chat template", Chat: true, Arch: "llama", Licence: "Apache-2.0"},
	{Repo: "nickypro/tinyllama-15M", Bytes: 62 << 20, About: "TinyStories Llama 15M (Karpathy's stories15M in HF format)", Arch: "llama", Licence: "MIT"},
	{Repo: "HuggingFaceTB/SmolLM2-360M-Instruct", Bytes: 700 << 20, About: "SmolLM2 360M instruct, ChatML chat template", Chat: true, Arch: "llama", Licence: "Apache-2.0"},
	{Repo: "Qwen/Qwen2.5-0.5B-Instruct", Bytes: 950 << 20, About: "Qwen2.5 0.5B instruct (q/k/v biases, GQA, tied embeddings), ChatML", Chat: true, Arch: "qwen2", Licence: "Apache-2.0"},
	{Repo: "Qwen/Qwen3-0.6B", Bytes: 1440 << 20, About: "Qwen3 0.6B, instruct with thinking (q/k RMSNorm, head_dim 128), ChatML", Chat: true, Arch: "qwen3", Licence: "Apache-2.0"},
	{Repo: "google/gemma-3-270m-it", Bytes: 550 << 20, About: "Gemma 3 270M instruct (sliding-window and global layers, 262k vocabulary)", Chat: true, Arch: "gemma3_text", Licence: "Gemma Terms of Use", Gated: true},
	{Repo: "meta-llama/Llama-3.2-1B-Instruct", Bytes: 2370 << 20, About: "Llama 3.2 1B instruct (llama3 RoPE scaling, 128k vocabulary)", Chat: true, Arch: "llama", Licence: "Llama 3.2 Community License", Gated: true},
}

// PresetFor returns the curated entry for repo.
func PresetFor(repo string) (Preset, bool) {
	for _, p := range Presets {
		if p.Repo == repo {
			return p, true
		}
	}
	return Preset{}, false
}

// Files a model directory may have. Required ones must exist.
var (
	requiredFiles = []string{"config.json"}
	optionalFiles = []string{"generation_config.json", "tokenizer.json", "vocab.json", "merges.txt", "tokenizer_config.json", "special_tokens_map.json"}
)

var repoPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,95}(/[A-Za-z0-9][A-Za-z0-9._-]{0,95})?$`)

// ValidRepo checks a repo id ("org/name" or "name") so it can never escape
// the cache directory.
func ValidRepo(repo string) error {
	if !repoPattern.MatchString(repo) || strings.Contains(repo, "..") {
		return fmt.Errorf("repo %q is not a valid model id (want org/name: letters, digits, . _ -)", repo)
	}
	return nil
}

func validFile(name string) error {
	if name == "" || strings.Contains(name, "..") || strings.HasPrefix(name, "/") || strings.Contains(name, `\`) || strings.Count(name, "/") > 2 {
		return fmt.Errorf("file name %q is not allowed", name)
	}
	return nil
}

// Progress reports one file's download.
type Progress struct {
	File    string  `json:"file"`
	Done    int64   `json:"done"`
	Total   int64   `json:"total"`
	Rate    float64 `json:"bytes_per_s"`
	ETA     float64 `json:"eta_s"`
	Cached  bool    `json:"cached"` // already in the cache: nothing to download
	Resumed int64   `json:"resumed_from,omitempty"`
}

// Client fetches files. Zero values use the environment's defaults.
type Client struct {
	Endpoint string       // HF_ENDPOINT or DefaultEndpoint
	Token    string       // HF_TOKEN
	CacheDir string       // $HF_HOME/hub
	HTTP     *http.Client // default: a client with a 30 s header timeout
	// OnProgress is called as bytes arrive (from the calling goroutine).
	OnProgress func(Progress)
	// MaxBytes > 0 refuses a pull whose files add up to more, checked
	// against the hub's listed sizes before downloading and against the
	// bytes received while downloading.
	MaxBytes int64
}

// FromEnv fills a Client from HF_ENDPOINT, HF_TOKEN, HF_HUB_CACHE and HF_HOME.
func FromEnv() *Client {
	c := &Client{Endpoint: os.Getenv("HF_ENDPOINT"), Token: os.Getenv("HF_TOKEN"), CacheDir: CacheDir()}
	return c
}

// CacheDir is $HF_HUB_CACHE, else $HF_HOME/hub, else ~/.cache/huggingface/hub.
func CacheDir() string {
	if d := os.Getenv("HF_HUB_CACHE"); d != "" {
		return d
	}
	home := os.Getenv("HF_HOME")
	if home == "" {
		if xdg := os.Getenv("XDG_CACHE_HOME"); xdg != "" {
			home = filepath.Join(xdg, "huggingface")
		} else {
			h, _ := os.UserHomeDir()
			home = filepath.Join(h, ".cache", "huggingface")
		}
	}
	return filepath.Join(home, "hub")
}

func (c *Client) endpoint() string {
	if c.Endpoint != "" {
		return strings.TrimRight(c.Endpoint, "/")
	}
	return DefaultEndpoint
}

func (c *Client) http() *http.Client {
	if c.HTTP != nil {
		return c.HTTP
	}
	return &http.Client{Transport: &http.Transport{Proxy: http.ProxyFromEnvironment, ResponseHeaderTimeout: 30 * time.Second}}
}

// RepoDir is the cache folder of a repo.
func (c *Client) RepoDir(repo string) string {
	return filepath.Join(c.CacheDir, "models--"+strings.ReplaceAll(repo, "/", "--"))
}

// meta is what a HEAD request tells about one file.
type meta struct {
	etag   string
	commit string
	size   int64
	url    string // where to GET it (after redirects)
}

// HTTPError is a failed request with a message for people.
type HTTPError struct {
	Status int
	URL    string
	Msg    string
}

func (e *HTTPError) Error() string { return e.Msg }

func (c *Client) do(ctx context.Context, method, url string, hdr http.Header, follow bool) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, method, url, nil)
	if err != nil {
		return nil, err
	}
	for k, v := range hdr {
		req.Header[k] = v
	}
	if c.Token != "" && strings.HasPrefix(url, c.endpoint()) {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	req.Header.Set("User-Agent", "inferscope")
	cl := c.http()
	if !follow {
		cp := *cl
		cp.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
		cl = &cp
	}
	resp, err := cl.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w (check your network, or HF_ENDPOINT)", method, url, err)
	}
	return resp, nil
}

func statusError(resp *http.Response, repo, file string) error {
	url := resp.Request.URL.String()
	switch resp.StatusCode {
	case http.StatusUnauthorized, http.StatusForbidden:
		return &HTTPError{resp.StatusCode, url, fmt.Sprintf("%s: access denied (HTTP %d) for %s: the repo may be gated or private; accept its terms on the hub and set HF_TOKEN", repo, resp.StatusCode, file)}
	case http.StatusNotFound:
		return &HTTPError{resp.StatusCode, url, fmt.Sprintf("%s: %s not found (HTTP 404): check the repo id and --revision", repo, file)}
	}
	return &HTTPError{resp.StatusCode, url, fmt.Sprintf("%s: %s: HTTP %d from %s", repo, file, resp.StatusCode, url)}
}

func (c *Client) head(ctx context.Context, repo, rev, file string) (*meta, error) {
	url := fmt.Sprintf("%s/%s/resolve/%s/%s", c.endpoint(), repo, rev, file)
	resp, err := c.do(ctx, http.MethodHead, url, nil, false)
	if err != nil {
		return nil, err
	}
	resp.Body.Close()
	m := &meta{url: url, commit: resp.Header.Get("X-Repo-Commit")}
	switch {
	case resp.StatusCode >= 300 && resp.StatusCode < 400:
		loc, err := resp.Location()
		if err != nil {
			return nil, fmt.Errorf("%s: %s: redirect without a Location", repo, file)
		}
		m.url = loc.String()
	case resp.StatusCode == http.StatusOK:
	default:
		return nil, statusError(resp, repo, file)
	}
	m.etag = resp.Header.Get("X-Linked-Etag")
	if m.etag == "" {
		m.etag = resp.Header.Get("ETag")
	}
	m.etag = strings.Trim(strings.TrimPrefix(m.etag, "W/"), `"`)
	size := resp.Header.Get("X-Linked-Size")
	if size == "" {
		size = resp.Header.Get("Content-Length")
	}
	m.size, _ = strconv.ParseInt(size, 10, 64)
	if m.etag == "" || m.commit == "" || !regexp.MustCompile(`^[0-9a-f]{40,64}$`).MatchString(m.etag) {
		return nil, fmt.Errorf("%s: %s: the server sent no usable ETag/X-Repo-Commit (is HF_ENDPOINT a Hugging Face hub?)", repo, file)
	}
	return m, nil
}

// maxIndexBytes bounds a sharded model's index file.
const maxIndexBytes = 16 << 20

// diskReserve is free space Pull leaves on the cache's disk.
const diskReserve = 256 << 20

// planned is one file Pull will fetch.
type planned struct {
	file string
	m    *meta
}

// Pull downloads a model (or only the given files) and returns its
// snapshot directory. Files already in the cache are not downloaded again.
// Before downloading the weights it asks the hub for every file's size and
// refuses a model larger than MaxBytes, or one that would leave less than
// 256 MiB free on the cache's disk.
func (c *Client) Pull(ctx context.Context, repo, rev string, only []string) (string, error) {
	if err := ValidRepo(repo); err != nil {
		return "", err
	}
	if rev == "" {
		rev = "main"
	}
	if strings.ContainsAny(rev, "/\\") || strings.Contains(rev, "..") {
		return "", fmt.Errorf("revision %q is not allowed", rev)
	}
	files := only
	explicit := len(only) > 0
	if !explicit {
		files = append(append([]string{}, requiredFiles...), optionalFiles...)
	}
	var commit string
	var plan []planned
	head := func(file string, required bool) (*meta, error) {
		if err := validFile(file); err != nil {
			return nil, err
		}
		m, err := c.head(ctx, repo, rev, file)
		if err != nil {
			var he *HTTPError
			if !required && errors.As(err, &he) && he.Status == http.StatusNotFound {
				return nil, nil
			}
			return nil, err
		}
		if commit == "" {
			commit = m.commit
		}
		return m, nil
	}
	for _, f := range files {
		m, err := head(f, explicit || contains(requiredFiles, f))
		if err != nil {
			return "", err
		}
		if m != nil {
			plan = append(plan, planned{f, m})
		}
	}
	if !explicit {
		// weights: one file, or an index and its shards
		m, err := head("model.safetensors", false)
		if err != nil {
			return "", err
		}
		if m != nil {
			plan = append(plan, planned{"model.safetensors", m})
		} else {
			im, err := head("model.safetensors.index.json", false)
			if err != nil {
				return "", err
			}
			if im == nil {
				return "", fmt.Errorf("%s: no model.safetensors or model.safetensors.index.json at revision %s (only safetensors weights are supported)", repo, rev)
			}
			if im.size > maxIndexBytes {
				return "", fmt.Errorf("%s: model.safetensors.index.json is %d bytes; the limit is %d", repo, im.size, maxIndexBytes)
			}
			idx, err := c.fetch(ctx, repo, "model.safetensors.index.json", im, c.snapshot(repo, commit))
			if err != nil {
				return "", err
			}
			shards, err := shardNames(idx)
			if err != nil {
				return "", err
			}
			for _, sh := range shards {
				m, err := head(sh, true)
				if err != nil {
					return "", err
				}
				plan = append(plan, planned{sh, m})
			}
		}
	}
	if commit == "" {
		return "", fmt.Errorf("%s: nothing downloaded", repo)
	}
	if err := c.checkSize(repo, plan); err != nil {
		return "", err
	}
	snap := c.snapshot(repo, commit)
	for _, it := range plan {
		if _, err := c.fetch(ctx, repo, it.file, it.m, snap); err != nil {
			return "", err
		}
	}
	if rev != commit {
		refs := filepath.Join(c.RepoDir(repo), "refs")
		if err := os.MkdirAll(refs, 0o755); err != nil {
			return "", err
		}
		if err := writeAtomic(filepath.Join(refs, rev), []byte(commit)); err != nil {
			return "", err
		}
	}
	return snap, nil
}

func (c *Client) snapshot(repo, commit string) string {
	return filepath.Join(c.RepoDir(repo), "snapshots", commit)
}

// checkSize refuses a plan whose listed sizes exceed MaxBytes, or whose
// missing files would leave less than diskReserve free on the cache's disk.
func (c *Client) checkSize(repo string, plan []planned) error {
	var total, need int64
	for _, it := range plan {
		total += it.m.size
		if st, err := os.Stat(filepath.Join(c.RepoDir(repo), "blobs", it.m.etag)); err != nil || st.Size() != it.m.size {
			need += it.m.size
		}
	}
	if c.MaxBytes > 0 && total > c.MaxBytes {
		return fmt.Errorf("%s is %s to download; this server's limit is %s (serve --max-pull-bytes)", repo, mib(total), mib(c.MaxBytes))
	}
	if free, ok := diskFree(c.CacheDir); ok && need > free-diskReserve {
		return fmt.Errorf("%s needs %s more on disk, but the model cache's disk has %s free (%s is kept free): free some space first", repo, mib(need), mib(free), mib(diskReserve))
	}
	return nil
}

func mib(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }

func shardNames(indexPath string) ([]string, error) {
	b, err := os.ReadFile(indexPath)
	if err != nil {
		return nil, err
	}
	var idx struct {
		WeightMap map[string]string `json:"weight_map"`
	}
	if err := json.Unmarshal(b, &idx); err != nil {
		return nil, fmt.Errorf("%s: %v", indexPath, err)
	}
	seen := map[string]bool{}
	var out []string
	for _, f := range idx.WeightMap {
		if err := validFile(f); err != nil {
			return nil, fmt.Errorf("%s: %w", indexPath, err)
		}
		if !seen[f] {
			seen[f] = true
			out = append(out, f)
		}
	}
	return out, nil
}

// fetch ensures blobs/<etag> holds the file and links it into the snapshot.
func (c *Client) fetch(ctx context.Context, repo, file string, m *meta, snap string) (string, error) {
	blobs := filepath.Join(c.RepoDir(repo), "blobs")
	if err := os.MkdirAll(blobs, 0o755); err != nil {
		return "", err
	}
	blob := filepath.Join(blobs, m.etag)
	if st, err := os.Stat(blob); err == nil && (m.size == 0 || st.Size() == m.size) {
		c.progress(Progress{File: file, Done: st.Size(), Total: st.Size(), Cached: true})
	} else if err := c.download(ctx, repo, file, m, blob); err != nil {
		return "", err
	}
	link := filepath.Join(snap, file)
	if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
		return "", err
	}
	rel, err := filepath.Rel(filepath.Dir(link), blob)
	if err != nil {
		return "", err
	}
	tmp := link + ".tmp-link"
	os.Remove(tmp)
	if err := os.Symlink(rel, tmp); err != nil {
		return "", fmt.Errorf("link %s: %w", link, err)
	}
	if err := os.Rename(tmp, link); err != nil {
		return "", err
	}
	return link, nil
}

func (c *Client) progress(p Progress) {
	if c.OnProgress != nil {
		c.OnProgress(p)
	}
}

// download writes blob.incomplete (resuming a previous attempt), verifies
// size and hash, then renames it to blob.
func (c *Client) download(ctx context.Context, repo, file string, m *meta, blob string) error {
	part := blob + ".incomplete"
	f, err := os.OpenFile(part, os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	defer f.Close()
	have, err := f.Seek(0, io.SeekEnd)
	if err != nil {
		return err
	}
	if m.size > 0 && have > m.size {
		have = 0
		f.Truncate(0)
		f.Seek(0, io.SeekStart)
	}
	hdr := http.Header{}
	if have > 0 {
		hdr.Set("Range", fmt.Sprintf("bytes=%d-", have))
	}
	resp, err := c.do(ctx, http.MethodGet, m.url, hdr, true)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusPartialContent && have > 0:
	case resp.StatusCode == http.StatusOK:
		if have > 0 { // the server ignored Range: start over
			have = 0
			if err := f.Truncate(0); err != nil {
				return err
			}
			f.Seek(0, io.SeekStart)
		}
	case resp.StatusCode == http.StatusRequestedRangeNotSatisfiable:
		have = 0
		f.Truncate(0)
		f.Seek(0, io.SeekStart)
		return c.download(ctx, repo, file, m, blob)
	default:
		return statusError(resp, repo, file)
	}
	start, resumed := time.Now(), have
	done := have
	last := time.Time{}
	buf := make([]byte, 256<<10)
	for {
		n, rerr := resp.Body.Read(buf)
		if n > 0 {
			if _, err := f.Write(buf[:n]); err != nil {
				if errors.Is(err, syscall.ENOSPC) {
					return fmt.Errorf("%s: disk full after %d of %d bytes writing %s: free space and run pull again to resume", file, done, m.size, part)
				}
				return fmt.Errorf("%s: write %s: %w", file, part, err)
			}
			done += int64(n)
			if m.size > 0 && done > m.size || m.size <= 0 && c.MaxBytes > 0 && done > c.MaxBytes {
				os.Remove(part)
				return fmt.Errorf("%s: the server sent more than the %d bytes it announced; the download was stopped", file, max(m.size, c.MaxBytes))
			}
			if time.Since(last) > 200*time.Millisecond {
				last = time.Now()
				c.report(file, done, m.size, resumed, start)
			}
		}
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			return fmt.Errorf("%s: download interrupted after %d of %d bytes (%v): run pull again to resume", file, done, m.size, rerr)
		}
	}
	c.report(file, done, m.size, resumed, start)
	if m.size > 0 && done != m.size {
		return fmt.Errorf("%s: download interrupted after %d of %d bytes: run pull again to resume", file, done, m.size)
	}
	if err := f.Sync(); err != nil {
		return err
	}
	if err := verify(part, m.etag); err != nil {
		os.Remove(part)
		return fmt.Errorf("%s: %w; the partial file was removed, run pull again", file, err)
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(part, blob)
}

func (c *Client) report(file string, done, total, resumed int64, start time.Time) {
	el := time.Since(start).Seconds()
	p := Progress{File: file, Done: done, Total: total, Resumed: resumed}
	if el > 0 {
		p.Rate = float64(done-resumed) / el
		if p.Rate > 0 && total > done {
			p.ETA = float64(total-done) / p.Rate
		}
	}
	c.progress(p)
}

// verify checks a file against its etag: a sha256 (64 hex, LFS files) or
// a git blob sha1 (40 hex).
func verify(path, etag string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	var h hash.Hash
	switch len(etag) {
	case 64:
		h = sha256.New()
	case 40:
		h = sha1.New()
		fmt.Fprintf(h, "blob %d\x00", st.Size())
	default:
		return fmt.Errorf("cannot verify etag %q", etag)
	}
	if _, err := io.Copy(h, f); err != nil {
		return err
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != etag {
		return fmt.Errorf("checksum mismatch: got %s, the server's etag is %s (corrupted download)", got, etag)
	}
	return nil
}

func writeAtomic(path string, b []byte) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// Resolve finds a cached snapshot of repo at revision (default main) with
// no network access. A model downloaded by huggingface_hub is found too.
func (c *Client) Resolve(repo, rev string) (string, error) {
	if err := ValidRepo(repo); err != nil {
		return "", err
	}
	if rev == "" {
		rev = "main"
	}
	dir := c.RepoDir(repo)
	commit := rev
	if b, err := os.ReadFile(filepath.Join(dir, "refs", rev)); err == nil {
		commit = strings.TrimSpace(string(b))
	}
	snap := filepath.Join(dir, "snapshots", commit)
	if _, err := os.Stat(filepath.Join(snap, "config.json")); err != nil {
		return "", fmt.Errorf("model %s (revision %s) is not in the cache %s: run 'inferscope pull %s'", repo, rev, c.CacheDir, repo)
	}
	return snap, nil
}

// Cached lists repos with at least one snapshot in the cache.
func (c *Client) Cached() []string {
	ents, _ := os.ReadDir(c.CacheDir)
	var out []string
	for _, e := range ents {
		name, ok := strings.CutPrefix(e.Name(), "models--")
		if !ok || !e.IsDir() {
			continue
		}
		repo := strings.Replace(name, "--", "/", 1)
		if _, err := c.Resolve(repo, ""); err == nil {
			out = append(out, repo)
		}
	}
	return out
}

func parentDir(d string) string { return filepath.Dir(d) }
