package tokenizer

// chat_template_test.go: Jinja chat templates of the families the app runs, rendered against
// goldens (go test -run TestChatTemplateGoldens -update rewrites them); the same goldens
// checked on upstream templates where they are at hand; loading from tokenizer_config.json;
// tokens of a template rendering marked as the application's; limits; the fuzz target.

import (
	"encoding/json"
	"errors"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/ardanlabs/jinja"
	"github.com/inferscope/inferscope/internal/testenv"
)

var update = flag.Bool("update", false, "rewrite testdata/templates/golden.json")

// templateFamilies: each template file of testdata/templates and the
// special tokens its model's tokenizer_config.json names.
var templateFamilies = []struct {
	name     string
	specials map[string]string
}{
	{"llama3", map[string]string{"bos_token": "<|begin_of_text|>", "eos_token": "<|eot_id|>"}},
	{"qwen2.5", map[string]string{"eos_token": "<|im_end|>", "pad_token": "<|endoftext|>"}},
	{"qwen3", map[string]string{"eos_token": "<|im_end|>", "pad_token": "<|endoftext|>"}},
	{"gemma3", map[string]string{"bos_token": "<bos>", "eos_token": "<eos>", "pad_token": "<pad>", "unk_token": "<unk>"}},
	{"phi3", map[string]string{"bos_token": "<s>", "eos_token": "<|endoftext|>", "unk_token": "<unk>"}},
	{"mistral", map[string]string{"bos_token": "<s>", "eos_token": "</s>", "unk_token": "<unk>"}},
	{"smollm2", map[string]string{"bos_token": "<|im_start|>", "eos_token": "<|im_end|>"}},
}

var templateCases = []struct {
	name string
	msgs []ChatMessage
}{
	{"system+user", []ChatMessage{{"system", "You are a terse assistant."}, {"user", "What is 2+2?"}}},
	{"multi-turn", []ChatMessage{{"user", "Hi!"}, {"assistant", "Hello! How can I help?"}, {"user", "Name a colour."}}},
}

// goldenDate is strftime_now's clock in the goldens (Llama 3 writes it).
var goldenDate = time.Date(2025, time.March, 7, 12, 0, 0, 0, time.UTC)

func renderCases(t *testing.T, tmpl *ChatTemplate) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, c := range templateCases {
		for _, gen := range []bool{true, false} {
			s, err := tmpl.Render(c.msgs, ChatRenderOptions{AddGenerationPrompt: gen, Now: goldenDate})
			if err != nil {
				t.Fatalf("%s %s: %v", tmpl.Origin, c.name, err)
			}
			key := c.name
			if gen {
				key += ", generation prompt"
			}
			out[key] = s
		}
	}
	return out
}

func readGoldens(t *testing.T) map[string]map[string]string {
	t.Helper()
	b, err := os.ReadFile("testdata/templates/golden.json")
	if err != nil {
		t.Fatal(err)
	}
	var g map[string]map[string]string
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatal(err)
	}
	return g
}

func TestChatTemplateGoldens(t *testing.T) {
	got := map[string]map[string]string{}
	for _, f := range templateFamilies {
		src, err := os.ReadFile(filepath.Join("testdata/templates", f.name+".jinja"))
		if err != nil {
			t.Fatal(err)
		}
		tmpl, err := ParseChatTemplate(string(src), f.name+".jinja", f.specials)
		if err != nil {
			t.Fatal(err)
		}
		got[f.name] = renderCases(t, tmpl)
	}
	if *update {
		b, _ := json.MarshalIndent(got, "", "  ")
		if err := os.WriteFile("testdata/templates/golden.json", append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want := readGoldens(t)
	for fam, cases := range got {
		if len(want[fam]) != len(cases) {
			t.Errorf("%s: %d goldens, %d cases (run with -update)", fam, len(want[fam]), len(cases))
		}
		for k, v := range cases {
			if want[fam][k] != v {
				t.Errorf("%s, %s:\n got %q\nwant %q", fam, k, v, want[fam][k])
			}
		}
	}
}

// TestUpstreamChatTemplates renders the upstream templates of Llama 3.2 1B
// Instruct and Qwen3 that ship in github.com/ardanlabs/jinja's test data
// (the module as the Go proxy serves it) and compares them with the goldens
// of our own llama3 and qwen3 templates. Skipped when the module cannot be
// had.
func TestUpstreamChatTemplates(t *testing.T) {
	if testing.Short() {
		testenv.Unavailable(t, "fetches github.com/ardanlabs/jinja@v1.8.0 from the module proxy (not with -short)")
	}
	out, err := exec.Command("go", "mod", "download", "-json", "github.com/ardanlabs/jinja@v1.8.0").Output()
	var mod struct{ Dir string }
	if err != nil || json.Unmarshal(out, &mod) != nil || mod.Dir == "" {
		testenv.Unavailable(t, "github.com/ardanlabs/jinja@v1.8.0 not available from the module proxy: %v", err)
	}
	want := readGoldens(t)
	for _, u := range []struct{ file, family string }{
		{"Llama-3.2-1B-Instruct-GGUF.jinja", "llama3"},
		{"Qwen3-8B-Q8_0.jinja", "qwen3"},
	} {
		src, err := os.ReadFile(filepath.Join(mod.Dir, "testdata", "templates", u.file))
		if err != nil {
			t.Fatal(err)
		}
		var sp map[string]string
		for _, f := range templateFamilies {
			if f.name == u.family {
				sp = f.specials
			}
		}
		tmpl, err := ParseChatTemplate(string(src), u.file, sp)
		if err != nil {
			t.Fatal(err)
		}
		for k, v := range renderCases(t, tmpl) {
			if want[u.family][k] != v {
				t.Errorf("upstream %s, %s:\n got %q\nwant %q", u.file, k, v, want[u.family][k])
			}
		}
	}
}

func TestChatTemplateRaises(t *testing.T) {
	src, err := os.ReadFile("testdata/templates/gemma3.jinja")
	if err != nil {
		t.Fatal(err)
	}
	tmpl, err := ParseChatTemplate(string(src), "gemma3", nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = tmpl.Render([]ChatMessage{{"user", "a"}, {"user", "b"}}, ChatRenderOptions{})
	if err == nil || !strings.Contains(err.Error(), "Conversation roles must alternate") {
		t.Fatalf("err %v", err)
	}
}

// TestChatTemplateLibrary pins the Jinja features chat templates lean on.
func TestChatTemplateLibrary(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		{`{{ "  x  ".strip() }}|{{ "abc".startswith("ab") }}|{{ "abc".endswith("c") }}`, "x|True|True"},
		{`{{ {"a": 1, "b": [1, "x"]} | tojson }}`, `{"a": 1, "b": [1, "x"]}`},
		{`{{ "a</think>b".split("</think>")[-1] }}|{{ [1,2,3][::-1] | join(",") }}`, "b|3,2,1"},
		{`{% set ns = namespace(n=0) %}{% for m in messages %}{% set ns.n = ns.n + 1 %}{% endfor %}{{ ns.n }}`, "2"},
		{`{{ messages | selectattr("role", "equalto", "user") | list | length }}`, "1"},
		{`{{ bos_token ~ "." if add_generation_prompt else "" }}`, "<s>."},
		{`{{ "ab" * -1 }}|{{ "x" | indent(-3) }}`, "|x"},
		{`{{ strftime_now("%d %b %Y") }}`, "07 Mar 2025"},
	} {
		tmpl, err := ParseChatTemplate(c.src, "t", map[string]string{"bos_token": "<s>"})
		if err != nil {
			t.Fatalf("%s: %v", c.src, err)
		}
		got, err := tmpl.Render([]ChatMessage{{"system", "s"}, {"user", "u"}}, ChatRenderOptions{AddGenerationPrompt: true, Now: goldenDate})
		if err != nil {
			t.Fatalf("%s: %v", c.src, err)
		}
		if got != c.want {
			t.Errorf("%s: got %q, want %q", c.src, got, c.want)
		}
	}
}

func TestChatTemplateLimits(t *testing.T) {
	for _, src := range []string{
		`{% for i in range(100000000) %}x{% endfor %}`,
		`{% for i in range(1000) %}{% for j in range(1000) %}{% for k in range(1000) %}{% endfor %}{% endfor %}{% endfor %}`,
		`{% macro f() %}{{ f() }}{% endmacro %}{{ f() }}`,
		`{% set ns = namespace(s="ab") %}{% for i in range(64) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}{{ ns.s | length }}`,
		`{{ "x" * 9000000000000000000 }}`,
	} {
		tmpl, err := ParseChatTemplate(src, "t", nil)
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		_, err = tmpl.Render(nil, ChatRenderOptions{})
		if err == nil && !strings.Contains(src, `"x" *`) {
			t.Errorf("%s: no error", src)
		}
		if err != nil && !errors.Is(err, jinja.ErrLimit) && !strings.Contains(err.Error(), "range") {
			t.Errorf("%s: %v", src, err)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("%s: took %v", src, d)
		}
	}
	if _, err := ParseChatTemplate(strings.Repeat("x", MaxChatTemplateBytes+1), "t", nil); err == nil {
		t.Error("oversized template accepted")
	}
}

func TestLoadChatTemplate(t *testing.T) {
	tj, err := os.ReadFile(filepath.Join(testenv.SharedDir(t, "models/tiny-gpt2"), "tokenizer.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, config, jinjaFile, want string
	}{
		{"string", `{"chat_template": "{{ bos_token }}[{{ messages[0].content }}]", "bos_token": {"content": "<B>", "lstrip": false}}`, "", "<B>[hi]"},
		{"named list", `{"chat_template": [{"name": "tool_use", "template": "T"}, {"name": "default", "template": "D{{ eos_token }}"}], "eos_token": "<E>"}`, "", "D<E>"},
		{"jinja file wins", `{"chat_template": "no"}`, "J{{ messages | length }}", "J1"},
		{"none", `{"bos_token": "<B>"}`, "", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			fsys := fstest.MapFS{"tokenizer.json": {Data: tj}, "tokenizer_config.json": {Data: []byte(c.config)}}
			if c.jinjaFile != "" {
				fsys["chat_template.jinja"] = &fstest.MapFile{Data: []byte(c.jinjaFile)}
			}
			tk, err := LoadFS(fsys, "m")
			if err != nil {
				t.Fatal(err)
			}
			tmpl := ChatTemplateOf(tk)
			if c.want == "" {
				if tmpl != nil || ChatStyleFor(tk) == ChatJinja {
					t.Fatal("template where there is none")
				}
				return
			}
			if tmpl == nil || ChatStyleFor(tk) != ChatJinja {
				t.Fatal("no template")
			}
			got, err := tmpl.Render([]ChatMessage{{"user", "hi"}}, ChatRenderOptions{})
			if err != nil || got != c.want {
				t.Fatalf("got %q, %v; want %q", got, err, c.want)
			}
		})
	}
	fsys := fstest.MapFS{"tokenizer.json": {Data: tj}, "tokenizer_config.json": {Data: []byte(`{"chat_template": 3}`)}}
	if _, err := LoadFS(fsys, "m"); err == nil {
		t.Error("a numeric chat_template accepted")
	}
}

// TestEncodeChatJinja: a ChatML template on a tokenizer with ChatML specials
// gives the same tokens as the hand-written ChatML style, the template's
// tokens marked Added, and special strings typed in content kept as text.
func TestEncodeChatJinja(t *testing.T) {
	tk := chatMLTokenizer(t)
	msgs := []ChatMessage{{Role: "system", Content: "Be brief."}, {Role: "user", Content: "Hi <|im_start|> there"}}
	wantText, wantToks, err := EncodeChat(tk, msgs, ChatML, false)
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile("testdata/templates/qwen2.5.jinja")
	if err != nil {
		t.Fatal(err)
	}
	if err := UseChatTemplate(tk, string(src), "qwen2.5.jinja"); err != nil {
		t.Fatal(err)
	}
	if ChatStyleFor(tk) != ChatJinja {
		t.Fatal("want jinja")
	}
	text, toks, err := EncodeChat(tk, msgs, ChatJinja, true)
	if err != nil {
		t.Fatal(err)
	}
	if text != wantText {
		t.Fatalf("rendered %q, want %q", text, wantText)
	}
	checkSpans(t, text, toks)
	if len(toks) != len(wantToks) {
		t.Fatalf("%d tokens, want %d", len(toks), len(wantToks))
	}
	for i := range toks {
		if toks[i] != wantToks[i] {
			t.Errorf("token %d: %+v, want %+v", i, toks[i], wantToks[i])
		}
	}
	// Without a system message the template writes Qwen's own: all of it
	// is the application's.
	_, toks, err = EncodeChat(tk, msgs[1:], ChatJinja, false)
	if err != nil {
		t.Fatal(err)
	}
	var content strings.Builder
	for _, x := range toks {
		if !x.Added {
			content.WriteString(x.Text)
		}
	}
	if got := content.String(); got != "Hi <|im_start|> there" {
		t.Errorf("content tokens spell %q", got)
	}
}

// chatMLTokenizer is the GPT-2 tokenizer with ChatML markers added, as
// SmolLM2-Instruct's tokenizer.json has them.
func chatMLTokenizer(t *testing.T) *ByteLevelBPE {
	base := gpt2Tokenizers(t)["tokenizer.json"].(*ByteLevelBPE)
	vocab := map[string]int{}
	base.ids.each(&base.pieces, func(k string, v int) { vocab[k] = v })
	merges := make([][2]string, base.rank.len())
	base.rank.each(func(a, b, r int) { merges[r] = [2]string{base.pieces.at(a), base.pieces.at(b)} })
	n := base.pieces.len()
	vocab["<|im_start|>"], vocab["<|im_end|>"] = n, n+1
	tk, err := newByteLevel(vocab, merges, "test")
	if err != nil {
		t.Fatal(err)
	}
	tk.addSpecial("<|im_start|>", n)
	tk.addSpecial("<|im_end|>", n+1)
	return tk
}

// FuzzChatTemplate: any template and messages render or fail, within the
// limits, without a panic.
func FuzzChatTemplate(f *testing.F) {
	for _, fam := range templateFamilies {
		if src, err := os.ReadFile(filepath.Join("testdata/templates", fam.name+".jinja")); err == nil {
			f.Add(string(src), "You are terse.", "Hi <|im_start|>", true)
		}
	}
	f.Add(`{% macro f(n) %}{{ f(n) }}{% endmacro %}{{ f(1) }}`, "", "", false)
	f.Add(`{% for i in range(9999999) %}{{ i }}{% endfor %}`, "a", "b", true)
	f.Add(`{{ messages[0].content * 99999999 }}{{ "%s" | format(1) }}{{ x[1:2:0] }}`, "s", "u", false)
	f.Fuzz(func(t *testing.T, src, sys, user string, gen bool) {
		tmpl, err := ParseChatTemplate(src, "fuzz", map[string]string{"bos_token": "<s>"})
		if err != nil {
			return
		}
		start := time.Now()
		out, err := tmpl.Render([]ChatMessage{{"system", sys}, {"user", user}}, ChatRenderOptions{AddGenerationPrompt: gen})
		if d := time.Since(start); d > 4*chatRenderTime {
			t.Fatalf("render took %v", d)
		}
		if err == nil && len(out) > MaxChatRenderBytes {
			t.Fatalf("%d bytes rendered", len(out))
		}
	})
}
