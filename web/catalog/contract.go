// Package catalog is the engine side as the server sees it: the models a
// server offers (EngineCatalog), the Runner and Run a connection drives,
// the ModelCard pages show, the batching schedulers and vocabulary search.
package catalog

// contract.go: what web needs from the engine side, as interfaces and
// plain types — a Catalog of models that starts Runs, the Runner a
// connection drives, and the ModelCard the browser shows. The event and
// settings types are engine/session's own: web sends them as they are.

import (
	"context"
	"time"

	"github.com/inferscope/inferscope/engine"
	"github.com/inferscope/inferscope/engine/session"
)

// Runner is one step-through run; *session.Session implements it.
type Runner interface {
	// Advance runs stages up to until, handing each event to emit as it
	// is produced (emit returning false stops early).
	Advance(ctx context.Context, until session.Until, emit func(*session.Event) bool) ([]*session.Event, error)
	Rewind(n int) (*session.Event, error)
	Force(id int) error
	Cancel() (*session.Event, error)
	Done() bool
	Next() session.Stage
	CurrentLogits() []float32
	// AddQueue counts time the next stage waited for an engine slot (the
	// fair queue) as the run's queue time.
	AddQueue(d time.Duration)
	// SetSampling applies other sampling settings from the current step
	// on (redrawing the current token if it was drawn) and shows the
	// current step under them (session.Session.SetSampling).
	SetSampling(p session.SamplingParams) (*session.Resampled, error)
	SampleMany(n int) ([]session.TokenCount, error)
	// Resample shows the current step under other sampling settings
	// without a forward pass; the run is unchanged.
	Resample(p session.SamplingParams, topN int) (*session.Resampled, error)
	// MemoryBytes is what the run holds now: scratch plus the KV cache
	// filled so far (counted against Limits.MaxKVBytes as it grows).
	MemoryBytes() int64
	// DeferLens, on, leaves the logit lens of the decode steps that follow
	// unread, and FillLens reads the last pass's into its append event: a
	// thinned run pays for the lens of the tokens it sends in full only
	// (thin.go).
	DeferLens(on bool)
	FillLens(ev *session.Event) bool
}

// Run is what Catalog.NewRun hands a connection: the runner and the card
// of the model it runs. Its memory is Runner.MemoryBytes.
type Run struct {
	Runner Runner
	Model  ModelCard
}

// ModelCard describes a model the server offers.
type ModelCard struct {
	Name         string `json:"name"`
	Default      bool   `json:"default"`
	Arch         string `json:"arch"`
	Source       string `json:"source"`
	Params       int64  `json:"params"`
	WeightsBytes int64  `json:"weights_bytes"`
	Precision    string `json:"precision"` // how the weight matrices are stored and read: "f32", "bf16" or a block type ("q4_k")
	// WeightTypes splits the parameters by storage type: bytes per
	// parameter from the loaded tensors (the memory panel).
	WeightTypes []engine.TypeBytes `json:"weight_types"`
	// Quantized says the matrices are in block types; OriginalsKnown that
	// they were quantized at load, so the float weights are known.
	Quantized       bool   `json:"quantized,omitempty"`
	OriginalsKnown  bool   `json:"originals_known,omitempty"`
	Layers          int    `json:"layers"`
	Dim             int    `json:"dim"`
	Heads           int    `json:"heads"`
	KVHeads         int    `json:"kv_heads"`
	HeadDim         int    `json:"head_dim"`
	HiddenDim       int    `json:"hidden_dim"`
	Vocab           int    `json:"vocab"`
	Context         int    `json:"context"`
	KVBytesPerToken int64  `json:"kv_bytes_per_token"`
	Tokenizer       string `json:"tokenizer"`
	Position        string `json:"position"`
	Checksum        string `json:"checksum"`
	Chat            string `json:"chat_style"`
	// EOSID is the end-of-text token's id (-1 if the tokenizer has none):
	// the lessons' stop-conditions panel forces it.
	EOSID int    `json:"eos_id"`
	Note  string `json:"note,omitempty"`
	// CardURL is the model card page (/models/NAME/card), when the model has one.
	CardURL string `json:"card_url,omitempty"`
	// Trained says how the model was trained, when its card says so.
	Trained *Training `json:"trained,omitempty"`
	// Shape is what the model view draws beyond the sizes above.
	Shape ModelShape `json:"shape"`
}

// ModelShape is the model's structure as the model view draws it: the
// norm and MLP kinds, whether the unembedding is tied, and the parameter
// count of each part (from the loaded weights).
type ModelShape struct {
	Norm   string            `json:"norm"` // RMSNorm, RMSNorm (1+w) (Gemma) or LayerNorm
	MLP    string            `json:"mlp"`  // SwiGLU, GeGLU or GELU
	Rope   bool              `json:"rope"` // RoPE inside attention (else learned position vectors)
	Params engine.PartParams `json:"params"`
	// The family's parts beyond Llama's (engine.Config), drawn by the model view:
	// PostNorms: a norm also after each sub-block, before the residual add (Gemma);
	// QKNorm: an RMSNorm on each head's query and key before RoPE (Qwen 3, Gemma 3);
	// Bias: the attention projections with a bias ("q,k,v": Qwen 2);
	// Fused: projections stored as one matrix (Phi-3: "qkv_proj,gate_up_proj").
	Family    string `json:"family"` // the config's model_type
	PostNorms bool   `json:"post_norms,omitempty"`
	QKNorm    bool   `json:"qk_norm,omitempty"`
	Bias      string `json:"bias,omitempty"`
	Fused     string `json:"fused,omitempty"`
	// Window is the sliding window of the local layers, Local[l] whether
	// layer l is one (every other layer is global: full attention).
	Window int    `json:"window,omitempty"`
	Local  []bool `json:"local,omitempty"`
	// RoPE: the global layers' base and scaling ("llama3 ×8"), the local
	// layers' own base (Gemma 3), the rotated dimensions when only part of
	// a head turns (Phi-3's partial_rotary_factor).
	RopeTheta      float64 `json:"rope_theta,omitempty"`
	RopeScaling    string  `json:"rope_scaling,omitempty"`
	RopeLocalTheta float64 `json:"rope_local_theta,omitempty"`
	RotaryDims     int     `json:"rotary_dims,omitempty"`
	// EmbedScale multiplies the token embedding (Gemma: √dim); AttnScale is
	// the score scale (1/√head_dim, or Gemma's query_pre_attn_scalar^−½);
	// the soft-caps cap·tanh(x/cap) of scores and logits (0: none).
	EmbedScale   float32 `json:"embed_scale,omitempty"`
	AttnScale    float32 `json:"attn_scale"`
	AttnSoftcap  float64 `json:"attn_softcap,omitempty"`
	FinalSoftcap float64 `json:"final_softcap,omitempty"`
}

// Training summarises how a model was trained and what it knows, for the
// lab's model line and the lessons (the full story is on its card page).
type Training struct {
	Corpus        string  `json:"corpus"`         // what it read, in a few words
	Tokens        int64   `json:"tokens"`         // training tokens seen
	Minutes       float64 `json:"minutes"`        // wall time of training
	Hardware      string  `json:"hardware"`       // where it trained
	ValLoss       float64 `json:"val_loss"`       // held-out loss, nats per token
	CapitalsRight int     `json:"capitals_right"` // greedy "The capital of X is" right
	CapitalsTotal int     `json:"capitals_total"` // countries checked
}

// Catalog is the set of models runs can use.
type Catalog interface {
	Models() []ModelCard
	// NewRun starts a run on the named model ("" = the default).
	NewRun(model string, cfg session.Config) (Run, error)
}
