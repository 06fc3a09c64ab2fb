package tokenizer

// chat.go: chat templates: messages rendered to text and tokens, with the tokens the app adds
// marked. A model that ships a Jinja template is rendered with it (chat_template.go); the
// hand-written styles below are the fallback for one that does not.

import (
	"fmt"
	"strings"
)

// ChatMessage is one turn of a conversation.
type ChatMessage struct {
	Role    string `json:"role"` // system, user or assistant
	Content string `json:"content"`
}

// ChatStyle names a chat template.
type ChatStyle string

const (
	// ChatJinja is the model's own Jinja template (ChatTemplateOf).
	ChatJinja ChatStyle = "jinja"
	// ChatML is SmolLM2-Instruct's (and Qwen's) template:
	// <|im_start|>role\ncontent<|im_end|>\n ... <|im_start|>assistant\n
	ChatML ChatStyle = "chatml"
	// ChatPlain is the fallback for models without chat tokens:
	// "System: ...\nUser: ...\nAssistant:"
	ChatPlain ChatStyle = "plain"
)

// ChatStyleFor picks the model's own template when it ships one, else ChatML
// when the vocabulary has its markers, else the plain style.
func ChatStyleFor(tk Tokenizer) ChatStyle {
	if ChatTemplateOf(tk) != nil {
		return ChatJinja
	}
	_, a := tk.Lookup("<|im_start|>")
	_, b := tk.Lookup("<|im_end|>")
	if a && b {
		return ChatML
	}
	return ChatPlain
}

// chatPart is a piece of a rendered conversation: template text the
// application adds, or a message's own content.
type chatPart struct {
	text     string
	template bool
	special  bool // a special token of the template
}

func checkRoles(msgs []ChatMessage) error {
	for i, m := range msgs {
		switch m.Role {
		case "system", "user", "assistant":
		default:
			return fmt.Errorf("chat: message %d has role %q (allowed: system, user, assistant)", i, m.Role)
		}
	}
	return nil
}

func renderChat(msgs []ChatMessage, style ChatStyle) ([]chatPart, error) {
	if err := checkRoles(msgs); err != nil {
		return nil, err
	}
	var parts []chatPart
	for _, m := range msgs {
		if style == ChatML {
			parts = append(parts, chatPart{"<|im_start|>", true, true}, chatPart{m.Role + "\n", true, false},
				chatPart{m.Content, false, false}, chatPart{"<|im_end|>", true, true}, chatPart{"\n", true, false})
		} else {
			role := strings.ToUpper(m.Role[:1]) + m.Role[1:]
			parts = append(parts, chatPart{role + ": ", true, false}, chatPart{m.Content, false, false}, chatPart{"\n", true, false})
		}
	}
	if style == ChatML {
		parts = append(parts, chatPart{"<|im_start|>", true, true}, chatPart{"assistant\n", true, false})
	} else {
		parts = append(parts, chatPart{"Assistant:", true, false})
	}
	return parts, nil
}

// EncodeChat renders messages with the chat template and tokenizes the
// result the way a chat API would, returning the rendered text and its
// tokens. Tokens made only of template text are marked Added, so a student
// sees what the application inserts. Special-token strings inside message
// content stay plain text.
//
// With ChatJinja the model's own template renders the text (with the
// generation prompt) and decides the BOS token, as transformers'
// apply_chat_template does: addBOS is not used. Special tokens are read from
// the template's text only; a message's content is found in the rendering
// (as written, or trimmed, in order), and content the template rewrote
// beyond that counts as template text.
func EncodeChat(tk Tokenizer, msgs []ChatMessage, style ChatStyle, addBOS bool) (string, []Token, error) {
	var parts []chatPart
	var err error
	if style == ChatJinja {
		parts, err = renderJinjaChat(tk, msgs)
		addBOS = false
	} else {
		parts, err = renderChat(msgs, style)
	}
	if err != nil {
		return "", nil, err
	}
	var rendered strings.Builder
	var toks []Token
	if addBOS && tk.BOS() >= 0 {
		toks = append(toks, Token{ID: tk.BOS(), Piece: tk.Piece(tk.BOS()), Special: true, Added: true})
	}
	type span struct{ a, b int }
	var tmpl []span
	runStart := 0
	var run strings.Builder
	first := true
	flush := func() error {
		if run.Len() == 0 {
			return nil
		}
		rt, err := tk.Encode(run.String(), EncodeOptions{Continuation: !first})
		if err != nil {
			return err
		}
		first = false
		for _, t := range rt {
			t.Start += runStart
			t.End += runStart
			for _, s := range tmpl {
				if t.Start >= s.a && t.End <= s.b && t.End > t.Start {
					t.Added = true
				}
			}
			toks = append(toks, t)
		}
		run.Reset()
		return nil
	}
	for _, p := range parts {
		pos := rendered.Len()
		rendered.WriteString(p.text)
		if p.special {
			if err := flush(); err != nil {
				return "", nil, err
			}
			id, ok := tk.Lookup(p.text)
			if !ok {
				return "", nil, fmt.Errorf("chat: template token %q is not in the vocabulary", p.text)
			}
			toks = append(toks, Token{ID: id, Piece: p.text, Text: p.text, Start: pos, End: pos + len(p.text), Special: tk.IsSpecial(id), Added: true})
			runStart = rendered.Len()
			continue
		}
		if run.Len() == 0 {
			runStart = pos
		}
		if p.template {
			tmpl = append(tmpl, span{pos, pos + len(p.text)})
		}
		run.WriteString(p.text)
	}
	if err := flush(); err != nil {
		return "", nil, err
	}
	return rendered.String(), toks, nil
}

// renderJinjaChat renders msgs with tk's template and cuts the text into
// template parts (special tokens apart) and content parts.
func renderJinjaChat(tk Tokenizer, msgs []ChatMessage) ([]chatPart, error) {
	t := ChatTemplateOf(tk)
	if t == nil {
		return nil, fmt.Errorf("chat: the model has no chat template")
	}
	if err := checkRoles(msgs); err != nil {
		return nil, err
	}
	text, err := t.Render(msgs, ChatRenderOptions{AddGenerationPrompt: true})
	if err != nil {
		return nil, err
	}
	return cutRendered(tk, text, msgs), nil
}

// cutRendered splits a rendering into parts: each message's content where it
// is found (in order), and the template text around it, cut at the
// vocabulary's special tokens.
func cutRendered(tk Tokenizer, text string, msgs []ChatMessage) []chatPart {
	var parts []chatPart
	template := func(s string) {
		var specials []string
		lookup := mapLookup(nil)
		switch x := tk.(type) {
		case *ByteLevelBPE:
			specials, lookup = x.specials, x.Lookup
		case *SentencePiece:
			specials, lookup = x.specials, x.Lookup
		}
		for _, seg := range splitSpecial(s, specials, lookup, true, nil) {
			if seg.text != "" {
				parts = append(parts, chatPart{seg.text, true, seg.special >= 0})
			}
		}
	}
	at := 0
	for _, m := range msgs {
		c := m.Content
		i := -1
		if c != "" {
			i = strings.Index(text[at:], c)
		}
		if i < 0 {
			if c = strings.TrimSpace(m.Content); c != "" {
				i = strings.Index(text[at:], c)
			}
		}
		if i < 0 {
			continue
		}
		template(text[at : at+i])
		parts = append(parts, chatPart{c, false, false})
		at += i + len(c)
	}
	template(text[at:])
	return parts
}
