package lessons

// glossary.go: the glossary (glossary.txt) and the hover definitions it adds
// to a section's text: the first use of each term in a section becomes a
// focusable button described by (aria-describedby) its definition.

import (
	"bytes"
	"fmt"
	"html"
	"io"
	"regexp"
	"sort"
	"strings"
	"sync"

	nethtml "golang.org/x/net/html"
)

// NumberKinds are the kinds of number the pages colour alike (CSS classes
// n-token, n-id, n-logit, n-prob; variables --num-token…).
var NumberKinds = []string{"token", "id", "logit", "prob"}

// Term is one glossary entry.
type Term struct {
	ID   string   `json:"id"`   // the term in lowercase, dashes for spaces
	Name string   `json:"name"` // as the glossary writes it
	Aka  []string `json:"aka,omitempty"`
	Kind string   `json:"kind,omitempty"` // one of NumberKinds, or empty
	Def  string   `json:"def"`
	// See is where the term is live on this site: a lab panel, a lesson
	// section, compare or /server (a path, validSee).
	See string `json:"see,omitempty"`
}

// seePath is what a see: line may hold: a page of this site, with a
// query and a fragment of plain characters.
var seePath = regexp.MustCompile(`^/(lab|compare|server|lessons/[a-z0-9-]+)(\?[A-Za-z0-9=&._-]*)?(#[a-z0-9-]+)?$`)

// ParseGlossary reads glossary.txt's format: entries of term/aka/kind/def
// lines separated by blank lines; # starts a comment line.
func ParseGlossary(name string, b []byte) ([]Term, error) {
	var out []Term
	var cur *Term
	seen := map[string]string{}
	end := func(line int) error {
		if cur == nil {
			return nil
		}
		if cur.Name == "" || cur.Def == "" {
			return fmt.Errorf("%s:%d: a glossary entry needs a term and a definition (term: and def: lines)", name, line)
		}
		for _, w := range append([]string{cur.Name}, cur.Aka...) {
			lw := strings.ToLower(w)
			if prev, ok := seen[lw]; ok {
				return fmt.Errorf("%s:%d: %q is already a spelling of %q", name, line, w, prev)
			}
			seen[lw] = cur.Name
		}
		out = append(out, *cur)
		cur = nil
		return nil
	}
	lines := strings.Split(string(b), "\n")
	for i, s := range lines {
		s = strings.TrimSpace(s)
		if strings.HasPrefix(s, "#") {
			continue
		}
		if s == "" {
			if err := end(i + 1); err != nil {
				return nil, err
			}
			continue
		}
		k, v, ok := strings.Cut(s, ":")
		if !ok {
			return nil, fmt.Errorf("%s:%d: glossary line %q is not key: value", name, i+1, s)
		}
		v = strings.TrimSpace(v)
		if cur == nil {
			cur = &Term{}
		}
		switch strings.TrimSpace(k) {
		case "term":
			if cur.Name != "" {
				return nil, fmt.Errorf("%s:%d: two term: lines in one entry (separate entries by a blank line)", name, i+1)
			}
			cur.Name = v
			cur.ID = termID(v)
			if cur.ID == "" {
				return nil, fmt.Errorf("%s:%d: term %q has no letters", name, i+1, v)
			}
		case "aka":
			for _, a := range strings.Split(v, "|") {
				if a = strings.TrimSpace(a); a != "" {
					cur.Aka = append(cur.Aka, a)
				}
			}
		case "kind":
			if !contains(NumberKinds, v) {
				return nil, fmt.Errorf("%s:%d: kind %q (allowed: %s)", name, i+1, v, strings.Join(NumberKinds, ", "))
			}
			cur.Kind = v
		case "def":
			cur.Def = v
		case "see":
			if !seePath.MatchString(v) {
				return nil, fmt.Errorf("%s:%d: see %q is not a page of this site (/lab#panel-…, /lessons/SLUG?s=N, /compare, /server)", name, i+1, v)
			}
			cur.See = v
		default:
			return nil, fmt.Errorf("%s:%d: unknown glossary key %q (allowed: term, aka, kind, def, see)", name, i+1, k)
		}
	}
	if err := end(len(lines)); err != nil {
		return nil, err
	}
	return out, nil
}

func termID(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			b.WriteRune(r)
		case r == ' ' || r == '-':
			b.WriteByte('-')
		case r > 127:
			fmt.Fprintf(&b, "u%x", r)
		}
	}
	return strings.Trim(b.String(), "-")
}

// glossary is the embedded glossary, parsed once, with one regexp matching
// any spelling (longest first, so "token id" wins over "token").
var glossary = sync.OnceValues(func() ([]Term, error) {
	b, err := files.ReadFile("glossary.txt")
	if err != nil {
		return nil, err
	}
	return ParseGlossary("glossary.txt", b)
})

type glossMatcher struct {
	re     *regexp.Regexp
	byWord map[string]*Term
}

var matcher = sync.OnceValue(func() *glossMatcher {
	terms, err := glossary()
	if err != nil {
		return nil
	}
	m := &glossMatcher{byWord: map[string]*Term{}}
	var words []string
	for i := range terms {
		for _, w := range append([]string{terms[i].Name}, terms[i].Aka...) {
			m.byWord[strings.ToLower(w)] = &terms[i]
			words = append(words, regexp.QuoteMeta(w))
		}
	}
	sort.SliceStable(words, func(i, j int) bool { return len(words[i]) > len(words[j]) })
	// a spelling counts only as a whole word: not inside a longer word
	m.re = regexp.MustCompile(`(?i)(?:^|[^\pL\pN_-])(` + strings.Join(words, "|") + `)(?:$|[^\pL\pN_-])`)
	return m
})

// Glossary returns the glossary's entries.
func Glossary() ([]Term, error) { return glossary() }

// skipTags are elements whose text is never glossed: code, links, headings,
// buttons, and the live values a panel fills in.
var skipTags = map[string]bool{"code": true, "pre": true, "a": true, "h1": true, "h2": true, "h3": true, "h4": true,
	"button": true, "script": true, "style": true, "kbd": true}

// gloss marks the first use of each glossary term in a section's HTML; sec
// makes the definitions' ids unique on the page. It returns the new HTML
// and the ids of the terms it marked.
func gloss(src string, sec int) (string, []string) {
	m := matcher()
	if m == nil {
		return src, nil
	}
	used := map[string]bool{}
	var ids []string
	var out bytes.Buffer
	z := nethtml.NewTokenizer(strings.NewReader(src))
	var stack []bool // per open element: does it stop glossing?
	skipping := func() bool {
		for _, s := range stack {
			if s {
				return true
			}
		}
		return false
	}
	for {
		tt := z.Next()
		switch tt {
		case nethtml.ErrorToken:
			if z.Err() == io.EOF {
				return out.String(), ids
			}
			return src, nil
		case nethtml.StartTagToken:
			raw := string(z.Raw())
			name, hasAttr := z.TagName()
			skip := skipTags[string(name)]
			for hasAttr {
				var k, v []byte
				k, v, hasAttr = z.TagAttr()
				if string(k) == "class" && strings.Contains(" "+string(v)+" ", " live ") {
					skip = true
				}
			}
			if !voidElement(string(name)) {
				stack = append(stack, skip)
			}
			out.WriteString(raw)
		case nethtml.EndTagToken:
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
			out.Write(z.Raw())
		case nethtml.TextToken:
			raw := string(z.Raw())
			if skipping() {
				out.WriteString(raw)
				continue
			}
			text := html.UnescapeString(raw)
			for {
				loc := m.re.FindStringSubmatchIndex(text)
				if loc == nil {
					break
				}
				a, b := loc[2], loc[3]
				word := text[a:b]
				t := m.byWord[strings.ToLower(word)]
				if used[t.ID] {
					out.WriteString(html.EscapeString(text[:b]))
					text = text[b:]
					continue
				}
				used[t.ID] = true
				ids = append(ids, t.ID)
				out.WriteString(html.EscapeString(text[:a]))
				out.WriteString(termHTML(t, word, sec))
				text = text[b:]
			}
			out.WriteString(html.EscapeString(text))
		default:
			out.Write(z.Raw())
		}
	}
}

func voidElement(n string) bool {
	switch n {
	case "br", "hr", "img", "input", "meta", "link", "wbr", "area", "base", "col", "embed", "source", "track":
		return true
	}
	return false
}

// termHTML is one glossed word: a button (focusable, works on touch) and
// its definition as a tooltip that describes it.
func termHTML(t *Term, word string, sec int) string {
	id := fmt.Sprintf("gl-%d-%s", sec, t.ID)
	cls := "term"
	if t.Kind != "" {
		cls += " n-" + t.Kind
	}
	return fmt.Sprintf(`<span class="term-wrap"><button type="button" class="%s" data-term="%s" aria-describedby="%s" aria-expanded="false">%s</button>`+
		`<span role="tooltip" class="term-def" id="%s"><b>%s</b>: %s</span></span>`,
		cls, t.ID, id, html.EscapeString(word), id, html.EscapeString(t.Name), html.EscapeString(t.Def))
}
