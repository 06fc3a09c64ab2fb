package engine

// loadconvert.go: loading a model straight into another weight precision.
// Converting a float32 checkpoint to BF16 after loading it holds both at
// once (the float32 file, then the BF16 copy: 3× the BF16 bytes at the
// peak); converting matrix by matrix from a mapping of the file, each
// float32 matrix's pages given back once converted, peaks near the BF16
// weights alone.

import (
	"fmt"
	"os"
	"runtime/debug"
	"unsafe"
)

// LoadModelAs loads a model as LoadModel does, with its weights in
// precision d (as WithWeights(d) would give them). For BF16 from a Hugging
// Face directory or a llama2.c file (where files can be mapped) the
// float32 matrices are converted as they are read from the file and never
// all resident at once; what stays in use in place (vectors, matrices
// already BF16) is copied off the file, as LoadModel's copy would hold it.
func LoadModelAs(path, tokenizerPath string, d DType) (_ *Model, err error) {
	direct := d == BF16 && canMapDirect
	if st, e := os.Stat(path); e == nil && !st.IsDir() && isGGUF(path) {
		direct = false
	}
	if !direct {
		m, err := LoadModel(path, tokenizerPath)
		if err != nil {
			return nil, err
		}
		return m.WithWeights(d), nil
	}
	var maps []*fileMap
	defer func() {
		if err != nil {
			for _, fm := range maps {
				fm.unmap()
			}
		}
	}()
	// a file cut short on disk while it is read faults: an error, not a crash
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer recoverLoad("model "+path, &err)
	m, err := loadModelWith(path, tokenizerPath, func(p string) ([]byte, error) {
		fm, err := mapFileDirect(p)
		if err != nil {
			return nil, err
		}
		maps = append(maps, fm)
		return fm.b, nil
	})
	if err != nil {
		return nil, err
	}
	w := m.Weights.mapMats(func(mt *Mat) Mat {
		if mt.DType == BF16 && !mt.InOut {
			return *mt
		}
		out := mt.toBF16()
		if mt.DType == F32 && len(mt.F32) > 0 {
			n := 4 * len(mt.F32)
			for _, fm := range maps {
				if o, ok := fm.holds(unsafe.Pointer(&mt.F32[0]), n); ok {
					fm.release(o, o+n)
				}
			}
		}
		return out
	})
	for _, fm := range maps {
		if err := fm.detach(); err != nil {
			return nil, fmt.Errorf("load model %s: %w", path, err)
		}
	}
	return &Model{Name: m.Name, Source: m.Source, Config: m.Config, Weights: w, Tokenizer: m.Tokenizer, GGUF: m.GGUF}, nil
}
