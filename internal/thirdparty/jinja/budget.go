package jinja

// budget.go: the inferscope patch. Upstream v1.8.0 renders without limits:
// a template can loop, recurse or grow a string for ever. A render here has a
// budget of steps (nodes + expressions), a macro/caller call depth, a size for
// every string and list it makes and for its output, and a deadline.

import (
	"errors"
	"fmt"
	"time"
)

// Limits bounds one render. Zero fields take the defaults.
type Limits struct {
	MaxSteps  int           // nodes and expressions evaluated (default 1,000,000)
	MaxDepth  int           // nested macro and caller calls (default 64)
	MaxBytes  int           // longest string, list (items × 16) or output (default 4 MiB)
	MaxTime   time.Duration // wall time (default 2 s)
	startTime time.Time
}

// ErrLimit is wrapped by every error a budget returns.
var ErrLimit = errors.New("jinja: render limit")

// maxAlloc bounds allocations made before a budget can see them (range,
// string repetition, indent width): an upstream-independent safety net.
const maxAlloc = 1 << 22

type budget struct {
	l     Limits
	steps int
	depth int
}

func newBudget(l Limits) *budget {
	if l.MaxSteps <= 0 {
		l.MaxSteps = 1_000_000
	}
	if l.MaxDepth <= 0 {
		l.MaxDepth = 64
	}
	if l.MaxBytes <= 0 {
		l.MaxBytes = 4 << 20
	}
	if l.MaxTime <= 0 {
		l.MaxTime = 2 * time.Second
	}
	l.startTime = time.Now()
	return &budget{l: l}
}

func (b *budget) step() error {
	if b == nil {
		return nil
	}
	b.steps++
	if b.steps > b.l.MaxSteps {
		return fmt.Errorf("%w: more than %d steps", ErrLimit, b.l.MaxSteps)
	}
	if b.steps&1023 == 0 && time.Since(b.l.startTime) > b.l.MaxTime {
		return fmt.Errorf("%w: longer than %v", ErrLimit, b.l.MaxTime)
	}
	return nil
}

func (b *budget) size(n int) error {
	if b != nil && n > b.l.MaxBytes {
		return fmt.Errorf("%w: output over %d bytes", ErrLimit, b.l.MaxBytes)
	}
	return nil
}

func (b *budget) value(v Value) error {
	if b == nil {
		return nil
	}
	switch {
	case v.IsString():
		if len(v.AsString()) > b.l.MaxBytes {
			return fmt.Errorf("%w: a string over %d bytes", ErrLimit, b.l.MaxBytes)
		}
	case v.IsList():
		if v.AsList().Len()*16 > b.l.MaxBytes {
			return fmt.Errorf("%w: a list over %d items", ErrLimit, b.l.MaxBytes/16)
		}
	}
	return nil
}

func (b *budget) enter() error {
	if b == nil {
		return nil
	}
	b.depth++
	if b.depth > b.l.MaxDepth {
		return fmt.Errorf("%w: calls nested deeper than %d", ErrLimit, b.l.MaxDepth)
	}
	return nil
}

func (b *budget) leave() {
	if b != nil {
		b.depth--
	}
}

// RenderLimited is Render within limits; a Value in data is used as it is
// (a callable, say). A panic inside the evaluator is
// returned as an error.
func (t *Template) RenderLimited(data map[string]any, l Limits) (out string, err error) {
	defer func() {
		if r := recover(); r != nil {
			out, err = "", fmt.Errorf("jinja: render failed: %v", r)
		}
	}()
	vals := make(map[string]Value, len(data))
	for k, v := range data {
		if x, ok := v.(Value); ok {
			vals[k] = x
			continue
		}
		vals[k] = FromGoValue(v)
	}
	e := evaluator{builtins: cachedBuiltins, budget: newBudget(l)}
	e.scope = newScope(e.builtins)
	for k, v := range vals {
		e.scope.set(k, v)
	}
	if err := e.execNodes(t.nodes); err != nil {
		return "", err
	}
	return e.output.String(), nil
}

// CompileSafe is Compile with a panic in the scanner or parser returned as an
// error.
func CompileSafe(source string) (t *Template, err error) {
	defer func() {
		if r := recover(); r != nil {
			t, err = nil, fmt.Errorf("jinja: compile failed: %v", r)
		}
	}()
	return Compile(source)
}
