package lessons

// question.go: predict-then-reveal questions and exercises: the ::: question
// and ::: exercise blocks, validated when a lesson is parsed.

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// QuestionKinds are the kinds of answer a question takes.
var QuestionKinds = []string{"choice", "number", "text"}

// questionFields are the fields a question or exercise block may have.
var questionFields = []string{"id", "ask", "kind", "options", "answer", "tolerance"}

// Question is one question or exercise block. The page shows Ask before the
// section's panel reveals anything; the student's answer is checked against
// the live value named by Answer once the panel publishes it.
type Question struct {
	ID       string `json:"id"`
	Exercise bool   `json:"exercise"` // checked on demand, after the student changed the panel
	Ask      string `json:"ask"`
	Kind     string `json:"kind"`
	// Options are a choice question's literal options; OptionsLive names a
	// live list value instead (exactly one of the two for kind choice).
	Options     []string `json:"options,omitempty"`
	OptionsLive string   `json:"options_live,omitempty"`
	// Answer is the live value (a key a panel publishes) that checks the answer.
	Answer string `json:"answer"`
	// Tolerance for kind number: absolute, or a fraction of the live value
	// when Relative (written "10%").
	Tolerance float64 `json:"tolerance"`
	Relative  bool    `json:"relative"`
}

var (
	questionID = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,63}$`)
	liveKey    = regexp.MustCompile(`^[a-z0-9_]+(\.[a-z0-9_]+)+$`)
)

func isQuestionBlock(b string) bool {
	b = strings.TrimSpace(b)
	return b == "question" || b == "exercise"
}

// qblock collects a block's fields while it is being read.
type qblock struct {
	block  string // "question" or "exercise"
	line   int
	fields map[string]string
}

func (q *qblock) field(s string) error {
	if strings.TrimSpace(s) == "" {
		return nil
	}
	k, v, ok := strings.Cut(s, ":")
	if !ok {
		return fmt.Errorf("%s field %q is not key: value", q.block, s)
	}
	k = strings.TrimSpace(k)
	if !contains(questionFields, k) {
		return fmt.Errorf("unknown %s field %q (allowed: %s)", q.block, k, strings.Join(questionFields, ", "))
	}
	if _, dup := q.fields[k]; dup {
		return fmt.Errorf("%s field %q given twice", q.block, k)
	}
	q.fields[k] = strings.TrimSpace(v)
	return nil
}

// live returns the key of a "live:KEY" value.
func live(field, v string) (string, error) {
	k, ok := strings.CutPrefix(v, "live:")
	if !ok {
		return "", fmt.Errorf("%s %q must be a live value, live:KEY, published by the section's panel (a typed answer could go stale when the model changes)", field, v)
	}
	if !liveKey.MatchString(k) {
		return "", fmt.Errorf("%s %q: a live key is lowercase words joined by dots, such as live:logits.top1", field, v)
	}
	return k, nil
}

// finish validates the block and returns the question (with the id it has,
// for error messages, even when it is invalid).
func (q *qblock) finish(vals Values) (Question, error) {
	f := q.fields
	out := Question{ID: f["id"], Exercise: q.block == "exercise", Kind: f["kind"]}
	var errs []error
	switch {
	case f["id"] == "":
		errs = append(errs, errors.New("missing id (a short name such as greedy-pick)"))
	case !questionID.MatchString(f["id"]):
		errs = append(errs, fmt.Errorf("id %q: use lowercase letters, digits and dashes", f["id"]))
	}
	if f["ask"] == "" {
		errs = append(errs, errors.New("missing ask (the question the student reads)"))
	} else {
		ask, err := resolve(f["ask"], vals)
		if err != nil {
			errs = append(errs, err)
		}
		out.Ask = ask
	}
	if !contains(QuestionKinds, out.Kind) {
		if out.Kind == "" {
			errs = append(errs, fmt.Errorf("missing kind (allowed: %s)", strings.Join(QuestionKinds, ", ")))
		} else {
			errs = append(errs, fmt.Errorf("bad kind %q (allowed: %s)", out.Kind, strings.Join(QuestionKinds, ", ")))
		}
	}
	if a, ok := f["answer"]; !ok || a == "" {
		errs = append(errs, errors.New("missing answer (the live value that checks it, such as live:logits.top1)"))
	} else if k, err := live("answer", a); err != nil {
		errs = append(errs, err)
	} else {
		out.Answer = k
	}
	opts, hasOpts := f["options"]
	switch {
	case out.Kind == "choice" && (!hasOpts || opts == ""):
		errs = append(errs, errors.New("a choice question needs options: live:KEY or a | b | c"))
	case out.Kind != "choice" && hasOpts:
		errs = append(errs, fmt.Errorf("options are for kind choice, not %q", out.Kind))
	case out.Kind == "choice" && strings.HasPrefix(opts, "live:"):
		k, err := live("options", opts)
		if err != nil {
			errs = append(errs, err)
		}
		out.OptionsLive = k
	case out.Kind == "choice":
		for _, o := range strings.Split(opts, "|") {
			if o = strings.TrimSpace(o); o == "" {
				errs = append(errs, fmt.Errorf("options %q has an empty option", opts))
				break
			} else {
				out.Options = append(out.Options, o)
			}
		}
		if len(out.Options) < 2 {
			errs = append(errs, fmt.Errorf("options %q: a choice needs at least two options, separated by |", opts))
		}
	}
	if tol, ok := f["tolerance"]; ok {
		if out.Kind != "number" {
			errs = append(errs, fmt.Errorf("tolerance is for kind number, not %q", out.Kind))
		} else {
			num, rel := strings.CutSuffix(tol, "%")
			x, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
			if err != nil || x < 0 || x != x || (rel && x > 100) || x > 1e12 {
				errs = append(errs, fmt.Errorf("tolerance %q: write an absolute amount (0.5) or a percentage of the real value (10%%)", tol))
			} else if rel {
				out.Tolerance, out.Relative = x/100, true
			} else {
				out.Tolerance = x
			}
		}
	}
	return out, errors.Join(errs...)
}

// AskPrompt in a question's ask is the prompt the page drew for the
// section's first panel (its prompts: list), filled in by the page.
const AskPrompt = "{{prompt}}"

// resolve fills {{model.*}} placeholders in a question's text; a live value
// cannot appear there (the question is read before the panel runs), and
// {{prompt}} stays for the page to fill with the prompt it drew.
func resolve(s string, vals Values) (string, error) {
	var err error
	s = placeholder.ReplaceAllStringFunc(s, func(m string) string {
		key := placeholder.FindStringSubmatch(m)[1]
		if key == "prompt" {
			return AskPrompt
		}
		if strings.HasPrefix(key, "live:") {
			err = fmt.Errorf("ask %q shows a live value, which would give the answer away before the panel runs", m)
			return m
		}
		v, ok := vals[key]
		if !ok {
			err = fmt.Errorf("unknown placeholder {{%s}} in ask", key)
		}
		return v
	})
	return s, err
}
