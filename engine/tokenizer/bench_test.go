package tokenizer

// bench_test.go: tokenizer encode benchmarks.

import (
	"fmt"
	"strings"
	"testing"
)

// BenchmarkEncode shows encoding time grows about linearly with input size.
func BenchmarkEncode(b *testing.B) {
	tks := gpt2Tokenizers(b)
	tk := tks["tokenizer.json"]
	sp := loadTok512(b)
	unit := "The quick brown fox jumps over the lazy dog, 42 times! café 😀\n"
	for _, kb := range []int{1, 10, 100, 1000} {
		text := strings.Repeat(unit, kb*1024/len(unit))
		b.Run(fmt.Sprintf("gpt2/%dKB", kb), func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			for i := 0; i < b.N; i++ {
				if _, err := tk.Encode(text, EncodeOptions{}); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("sentencepiece/%dKB", kb), func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			for i := 0; i < b.N; i++ {
				if _, err := sp.Encode(text, EncodeOptions{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
