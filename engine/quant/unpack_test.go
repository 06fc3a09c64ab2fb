package quant

// unpack_test.go: Unpack's numbers rebuild every value of the golden
// blocks bit for bit as Dequantize computes it.

import "testing"

func TestUnpackRebuildsDequantize(t *testing.T) {
	g := readGolden(t)
	seen := 0
	for _, c := range g.Cases {
		typ, _ := ParseType(c.Type)
		if typ.BlockSize() == 1 {
			if _, err := Unpack(typ, make([]byte, typ.BlockBytes())); err == nil {
				t.Errorf("%s: Unpack took a type without blocks", typ)
			}
			continue
		}
		seen++
		t.Run(c.Name, func(t *testing.T) {
			blocks := readFile(t, c.Blocks)
			n, bb := typ.BlockSize(), typ.BlockBytes()
			want := make([]float32, n)
			for b := 0; b < len(blocks)/bb; b++ {
				raw := blocks[b*bb : (b+1)*bb]
				u, err := Unpack(typ, raw)
				if err != nil {
					t.Fatal(err)
				}
				if err := Dequantize(typ, want, raw); err != nil {
					t.Fatal(err)
				}
				for i := range n {
					if got := u.Value(i); !sameBits(got, want[i]) {
						t.Fatalf("block %d value %d: rebuilt %g, Dequantize %g", b, i, got, want[i])
					}
				}
			}
		})
	}
	if seen != 5 {
		t.Fatalf("%d block types checked, want 5", seen)
	}
	if _, err := Unpack(Q4_K, make([]byte, 10)); err == nil {
		t.Error("a short block was taken")
	}
}
