package tokenizer

// chat_template.go: the chat template a model ships (the Jinja
// "chat_template" of tokenizer_config.json, chat_template.jinja, or GGUF's
// tokenizer.chat_template), rendered as transformers' apply_chat_template
// renders it, by github.com/ardanlabs/jinja (patched with render limits:
// internal/thirdparty/jinja/PATCHES.md).

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"time"

	"github.com/ardanlabs/jinja"
)

// Limits on a chat template and one rendering of it.
const (
	// MaxChatTemplateBytes bounds a template's source (the largest shipped
	// templates, with tool calling, are a few tens of KiB).
	MaxChatTemplateBytes = 256 << 10
	// MaxChatRenderBytes bounds a rendering, and every string the template
	// makes on the way.
	MaxChatRenderBytes = 4 << 20
	// chatRenderSteps and chatRenderTime bound the template's work.
	chatRenderSteps = 2_000_000
	chatRenderTime  = 2 * time.Second
	chatCallDepth   = 64
)

// ChatTemplate is a model's own Jinja chat template, compiled.
type ChatTemplate struct {
	Source string // the Jinja text
	Origin string // where it came from: "tokenizer_config.json", "chat_template.jinja", "GGUF tokenizer.chat_template"
	// Specials are the template's named tokens (bos_token, eos_token, …)
	// as the model's configuration spells them.
	Specials map[string]string
	tmpl     *jinja.Template
}

// ChatRenderOptions controls ChatTemplate.Render.
type ChatRenderOptions struct {
	// AddGenerationPrompt ends the text with the assistant's turn opened,
	// so the model writes the reply.
	AddGenerationPrompt bool
	// Now is the template's strftime_now() clock (Llama 3.x writes today's
	// date); zero means time.Now().
	Now time.Time
}

// ParseChatTemplate compiles a Jinja chat template. specials gives the
// values of bos_token, eos_token and the like (missing ones are ""). This is
// the entry point for a template read from GGUF metadata
// (tokenizer.chat_template); UseChatTemplate attaches one to a tokenizer.
func ParseChatTemplate(source, origin string, specials map[string]string) (*ChatTemplate, error) {
	if len(source) > MaxChatTemplateBytes {
		return nil, fmt.Errorf("chat template (%s) is %d bytes, the limit is %d", origin, len(source), MaxChatTemplateBytes)
	}
	if strings.TrimSpace(source) == "" {
		return nil, fmt.Errorf("chat template (%s) is empty", origin)
	}
	t, err := jinja.CompileSafe(source)
	if err != nil {
		return nil, fmt.Errorf("chat template (%s): %w", origin, err)
	}
	sp := map[string]string{}
	for k, v := range specials {
		sp[k] = v
	}
	return &ChatTemplate{Source: source, Origin: origin, Specials: sp, tmpl: t}, nil
}

// Render turns messages into the text the model reads, as transformers'
// apply_chat_template(messages, tokenize=False) does: the template sees
// messages (role, content), add_generation_prompt, the special tokens by
// name (bos_token, …), raise_exception and strftime_now. An error the
// template raises is returned with its message.
func (t *ChatTemplate) Render(msgs []ChatMessage, o ChatRenderOptions) (string, error) {
	list := make([]any, len(msgs))
	for i, m := range msgs {
		list[i] = map[string]any{"role": m.Role, "content": m.Content}
	}
	now := o.Now
	if now.IsZero() {
		now = time.Now()
	}
	data := map[string]any{
		"messages":              list,
		"add_generation_prompt": o.AddGenerationPrompt,
		"strftime_now": jinja.NewCallable("strftime_now", func(args []jinja.Value, _ map[string]jinja.Value) (jinja.Value, error) {
			if len(args) != 1 || !args[0].IsString() {
				return jinja.Undefined(), errors.New("strftime_now: want one format string")
			}
			return jinja.NewString(strftime(now, args[0].AsString())), nil
		}),
	}
	for k, v := range t.Specials {
		data[k] = v
	}
	out, err := t.tmpl.RenderLimited(data, jinja.Limits{
		MaxSteps: chatRenderSteps, MaxDepth: chatCallDepth, MaxBytes: MaxChatRenderBytes, MaxTime: chatRenderTime,
	})
	if err != nil {
		return "", fmt.Errorf("chat template (%s): %w", t.Origin, err)
	}
	return out, nil
}

// strftime formats t with the C directives chat templates use (%d %b %Y
// %B %m %y %H %M %S %A %a %j %%); others are kept as written.
func strftime(t time.Time, f string) string {
	var b strings.Builder
	for i := 0; i < len(f); i++ {
		if f[i] != '%' || i+1 == len(f) {
			b.WriteByte(f[i])
			continue
		}
		i++
		switch f[i] {
		case 'd':
			fmt.Fprintf(&b, "%02d", t.Day())
		case 'b':
			b.WriteString(t.Format("Jan"))
		case 'B':
			b.WriteString(t.Format("January"))
		case 'm':
			fmt.Fprintf(&b, "%02d", int(t.Month()))
		case 'y':
			fmt.Fprintf(&b, "%02d", t.Year()%100)
		case 'Y':
			fmt.Fprintf(&b, "%d", t.Year())
		case 'H':
			fmt.Fprintf(&b, "%02d", t.Hour())
		case 'M':
			fmt.Fprintf(&b, "%02d", t.Minute())
		case 'S':
			fmt.Fprintf(&b, "%02d", t.Second())
		case 'A':
			b.WriteString(t.Format("Monday"))
		case 'a':
			b.WriteString(t.Format("Mon"))
		case 'j':
			fmt.Fprintf(&b, "%03d", t.YearDay())
		case '%':
			b.WriteByte('%')
		default:
			b.WriteByte('%')
			b.WriteByte(f[i])
		}
	}
	return b.String()
}

// ChatTemplateOf returns the chat template attached to tk, or nil.
func ChatTemplateOf(tk Tokenizer) *ChatTemplate {
	if h, ok := tk.(interface{ chatTemplate() *ChatTemplate }); ok {
		return h.chatTemplate()
	}
	return nil
}

func (v *vocabulary) chatTemplate() *ChatTemplate { return v.chat }

// UseChatTemplate compiles source and attaches it to tk, so chat
// conversations render with it (EncodeChat with ChatJinja). bos_token and
// eos_token are tk's own BOS and EOS pieces. The GGUF loader calls it with
// tokenizer.chat_template; origin names the source in errors.
func UseChatTemplate(tk Tokenizer, source, origin string) error {
	sp := map[string]string{}
	if tk.BOS() >= 0 {
		sp["bos_token"] = tk.Piece(tk.BOS())
	}
	if tk.EOS() >= 0 {
		sp["eos_token"] = tk.Piece(tk.EOS())
	}
	t, err := ParseChatTemplate(source, origin, sp)
	if err != nil {
		return err
	}
	return attachChatTemplate(tk, t)
}

func attachChatTemplate(tk Tokenizer, t *ChatTemplate) error {
	var v *vocabulary
	switch x := tk.(type) {
	case *ByteLevelBPE:
		v = &x.vocabulary
	case *SentencePiece:
		v = &x.vocabulary
	default:
		return fmt.Errorf("chat template: a %T tokenizer cannot hold one", tk)
	}
	v.chat = t
	return nil
}

// tokenizerConfig is what tokenizer_config.json says about chat.
type tokenizerConfig struct {
	ChatTemplate json.RawMessage `json:"chat_template"`
	BOS          json.RawMessage `json:"bos_token"`
	EOS          json.RawMessage `json:"eos_token"`
	UNK          json.RawMessage `json:"unk_token"`
	PAD          json.RawMessage `json:"pad_token"`
}

// addedTokenText reads a special token field of tokenizer_config.json: a
// string, an AddedToken object {"content": …}, or null.
func addedTokenText(raw json.RawMessage) (string, bool) {
	if len(raw) == 0 {
		return "", false
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, true
	}
	var o struct {
		Content *string `json:"content"`
	}
	if json.Unmarshal(raw, &o) == nil && o.Content != nil {
		return *o.Content, true
	}
	return "", false
}

// loadChatTemplateFS finds a model directory's chat template:
// chat_template.jinja (transformers ≥ 4.43 saves it there), else
// tokenizer_config.json's chat_template — a string, or a list of
// {"name", "template"} whose "default" entry is used. It returns nil
// without error when there is none.
func loadChatTemplateFS(fsys fs.FS, dir string, tk Tokenizer) (*ChatTemplate, error) {
	sp := map[string]string{}
	if tk.BOS() >= 0 {
		sp["bos_token"] = tk.Piece(tk.BOS())
	}
	if tk.EOS() >= 0 {
		sp["eos_token"] = tk.Piece(tk.EOS())
	}
	var cfg tokenizerConfig
	b, err := fs.ReadFile(fsys, "tokenizer_config.json")
	switch {
	case err == nil:
		if err := json.Unmarshal(b, &cfg); err != nil {
			return nil, fmt.Errorf("%s/tokenizer_config.json: %w", dir, err)
		}
		for name, raw := range map[string]json.RawMessage{"bos_token": cfg.BOS, "eos_token": cfg.EOS, "unk_token": cfg.UNK, "pad_token": cfg.PAD} {
			if s, ok := addedTokenText(raw); ok {
				sp[name] = s
			}
		}
	case !errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("%s/tokenizer_config.json: %w", dir, err)
	}
	if j, err := fs.ReadFile(fsys, "chat_template.jinja"); err == nil {
		return ParseChatTemplate(string(j), "chat_template.jinja", sp)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s/chat_template.jinja: %w", dir, err)
	}
	if len(cfg.ChatTemplate) == 0 || string(cfg.ChatTemplate) == "null" {
		return nil, nil
	}
	var src string
	if json.Unmarshal(cfg.ChatTemplate, &src) != nil {
		var named []struct {
			Name     string `json:"name"`
			Template string `json:"template"`
		}
		if err := json.Unmarshal(cfg.ChatTemplate, &named); err != nil {
			return nil, fmt.Errorf("%s/tokenizer_config.json: chat_template is neither a string nor a list of named templates", dir)
		}
		for _, n := range named {
			if n.Name == "default" {
				src = n.Template
			}
		}
		if src == "" {
			return nil, fmt.Errorf("%s/tokenizer_config.json: chat_template has no \"default\" entry", dir)
		}
	}
	return ParseChatTemplate(src, "tokenizer_config.json", sp)
}
