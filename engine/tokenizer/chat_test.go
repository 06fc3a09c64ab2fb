package tokenizer

// chat_test.go: chat templates turn messages into the expected special tokens.

import (
	"strings"
	"testing"
)

func TestEncodeChat(t *testing.T) {
	base := gpt2Tokenizers(t)["tokenizer.json"].(*ByteLevelBPE)
	msgs := []ChatMessage{{Role: "system", Content: "Be brief."}, {Role: "user", Content: "Hi <|im_start|> there"}}

	t.Run("plain", func(t *testing.T) {
		if ChatStyleFor(base) != ChatPlain {
			t.Fatal("GPT-2 has no ChatML tokens")
		}
		text, toks, err := EncodeChat(base, msgs, ChatPlain, false)
		if err != nil {
			t.Fatal(err)
		}
		if want := "System: Be brief.\nUser: Hi <|im_start|> there\nAssistant:"; text != want {
			t.Fatalf("rendered %q", text)
		}
		checkSpans(t, text, toks)
		added := 0
		for _, tk := range toks {
			if tk.Added {
				added++
				if strings.Contains(tk.Text, "brief") {
					t.Errorf("content token %q marked added", tk.Text)
				}
			}
		}
		if added < 4 {
			t.Errorf("only %d template tokens marked added", added)
		}
	})

	t.Run("chatml", func(t *testing.T) {
		// A copy of the GPT-2 tokenizer with ChatML markers added, as
		// SmolLM2-Instruct's tokenizer.json has them.
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
		if ChatStyleFor(tk) != ChatML {
			t.Fatal("want chatml")
		}
		text, toks, err := EncodeChat(tk, msgs, ChatML, false)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(text, "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\n") || !strings.HasSuffix(text, "<|im_start|>assistant\n") {
			t.Fatalf("rendered %q", text)
		}
		checkSpans(t, text, toks)
		var specials int
		for _, x := range toks {
			if x.Special {
				specials++
				if !x.Added {
					t.Errorf("template special %q not marked added", x.Piece)
				}
			}
		}
		// 2 messages × (start, end) + the assistant start; the "<|im_start|>"
		// typed inside user content must stay plain text.
		if specials != 5 {
			t.Errorf("%d special tokens, want 5", specials)
		}
	})

	t.Run("bad role", func(t *testing.T) {
		_, _, err := EncodeChat(base, []ChatMessage{{Role: "tool", Content: "x"}}, ChatPlain, false)
		if err == nil || !strings.Contains(err.Error(), `role "tool"`) {
			t.Fatalf("err %v", err)
		}
	})
}
