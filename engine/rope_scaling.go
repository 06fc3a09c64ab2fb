package engine

// rope_scaling.go: RoPE's inverse frequencies, θ^(−2j/d) for each pair j of
// the rotated dimensions, and the rope_scaling variants that reshape them
// (transformers' modeling_rope_utils: _compute_default_rope_parameters,
// _compute_linear_scaling_rope_parameters, _compute_dynamic_ntk_parameters,
// _compute_llama3_parameters), and a GGUF file's rope_freqs divisors
// (ggml_rope_ext's freq_factors). Computed in float64; the angles pos·freq and
// their cos and sin too, rounded to float32 once (ropeTables).

import (
	"encoding/binary"
	"fmt"
	"math"
)

// RopeScaling is a config's rope_scaling: how the global layers' RoPE
// frequencies are reshaped for a longer context. The zero value is none.
type RopeScaling struct {
	Type string // "" (none), "linear", "dynamic", "llama3" or "freqs"
	// Factor: linear divides every frequency by it; llama3 the low ones;
	// dynamic changes nothing inside the context the engine allows.
	Factor float64
	// llama3 only: wavelengths longer than OriginalMax/LowFreqFactor are
	// divided by Factor, shorter than OriginalMax/HighFreqFactor kept, and
	// those between blended.
	LowFreqFactor, HighFreqFactor float64
	OriginalMax                   int
	// freqs only: a GGUF file's rope_freqs tensor (llama.cpp's converter
	// stores Llama 3.1's llama3 scaling so), one float32 divisor of each
	// pair's frequency, as its little-endian bytes (a string keeps Config
	// comparable).
	FreqFactors string
}

// RopeFreqFactors makes a "freqs" scaling from per-pair divisors.
func RopeFreqFactors(f []float32) RopeScaling {
	b := make([]byte, 4*len(f))
	for i, x := range f {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return RopeScaling{Type: "freqs", FreqFactors: string(b)}
}

// factor is the j-th divisor of a "freqs" scaling.
func (s RopeScaling) factor(j int) float64 {
	return float64(math.Float32frombits(binary.LittleEndian.Uint32([]byte(s.FreqFactors[4*j : 4*j+4]))))
}

// String describes the scaling for people ("llama3 ×8" or "").
func (s RopeScaling) String() string {
	switch s.Type {
	case "":
		return ""
	case "freqs":
		return "rope_freqs"
	}
	return fmt.Sprintf("%s ×%g", s.Type, s.Factor)
}

func (s RopeScaling) validate(c Config) error {
	switch s.Type {
	case "":
		return nil
	case "linear", "dynamic":
		if !(s.Factor > 0) || math.IsInf(s.Factor, 0) {
			return fmt.Errorf("rope_scaling %s: factor %g must be a positive number", s.Type, s.Factor)
		}
		if s.Type == "dynamic" && s.OriginalMax > 0 && s.OriginalMax < c.SeqLen {
			// _compute_dynamic_ntk_parameters grows the base once a sequence
			// passes max_position_embeddings; a smaller original context
			// would have it change inside ours (and cached keys keep the
			// old rotation): not supported.
			return fmt.Errorf("rope_scaling dynamic with original_max_position_embeddings %d below max_position_embeddings %d is not supported", s.OriginalMax, c.SeqLen)
		}
		return nil
	case "llama3":
		if !(s.Factor > 0) || math.IsInf(s.Factor, 0) || s.OriginalMax <= 0 ||
			!(s.HighFreqFactor > s.LowFreqFactor) || !(s.LowFreqFactor > 0) || math.IsInf(s.HighFreqFactor, 0) {
			return fmt.Errorf("rope_scaling llama3: factor %g, low_freq_factor %g, high_freq_factor %g, original_max_position_embeddings %d: need factor > 0, 0 < low < high and a positive context",
				s.Factor, s.LowFreqFactor, s.HighFreqFactor, s.OriginalMax)
		}
		return nil
	case "freqs":
		if len(s.FreqFactors) != 4*(c.Rotary()/2) {
			return fmt.Errorf("rope_freqs has %d factors, the rotated dimensions need %d", len(s.FreqFactors)/4, c.Rotary()/2)
		}
		for j := range len(s.FreqFactors) / 4 {
			if f := s.factor(j); !(f > 0) || math.IsInf(f, 0) {
				return fmt.Errorf("rope_freqs factor %d is %g, must be a positive number", j, f)
			}
		}
		return nil
	}
	return fmt.Errorf("rope_scaling type %q is not supported (supported: llama3, linear, dynamic)", s.Type)
}

// ropeInvFreq returns the inverse frequency of each rotated pair j (Rotary()/2
// of them) for the global layers, or with local for the sliding ones (which
// differ only when the model gives them their own base: Gemma 3's
// rope_local_base_freq, default RoPE with no scaling).
func (c Config) ropeInvFreq(local bool) []float64 {
	theta, scale := c.RopeTheta, c.RopeScaling
	if local && c.RopeLocalTheta > 0 {
		theta, scale = c.RopeLocalTheta, RopeScaling{}
	}
	rot := c.Rotary()
	inv := make([]float64, rot/2)
	for j := range inv {
		// _compute_default_rope_parameters: 1 / base^(2j/dim), dim the rotated width
		inv[j] = 1 / math.Pow(theta, float64(2*j)/float64(rot))
	}
	switch scale.Type {
	case "linear":
		// _compute_linear_scaling_rope_parameters: inv_freq /= factor
		for j := range inv {
			inv[j] /= scale.Factor
		}
	case "dynamic":
		// _compute_dynamic_ntk_parameters with seq_len ≤ max_position_embeddings
		// (the engine's context limit): base·(factor·1 − (factor−1))^… = base,
		// the default frequencies; dynamic_rope_update changes them only past
		// that length.
	case "llama3":
		llama3InvFreq(inv, scale)
	case "freqs":
		// ggml_rope_ext with freq_factors: theta_j = pos·base^(−2j/d) / factor_j
		for j := range inv {
			inv[j] /= scale.factor(j)
		}
	}
	return inv
}

// llama3InvFreq reshapes default frequencies as _compute_llama3_parameters
// does: wavelengths (2π/freq) shorter than original/high_freq_factor stay,
// longer than original/low_freq_factor are divided by factor, and those
// between are blended with smooth = (original/wavelen − low)/(high − low).
func llama3InvFreq(inv []float64, s RopeScaling) {
	old := float64(s.OriginalMax)
	lowWavelen, highWavelen := old/s.LowFreqFactor, old/s.HighFreqFactor
	for j, f := range inv {
		wavelen := 2 * math.Pi / f
		switch {
		case wavelen < highWavelen: // high frequency: kept
		case wavelen > lowWavelen: // low frequency: interpolated by factor
			inv[j] = f / s.Factor
		default: // medium: smoothed between the two
			smooth := (old/wavelen - s.LowFreqFactor) / (s.HighFreqFactor - s.LowFreqFactor)
			inv[j] = (1-smooth)*f/s.Factor + smooth*f
		}
	}
}
