// Package views holds the templ components that render inferscope's pages.
package views

import (
	"fmt"
	"net/http"
)

func statusText(code int) string {
	return fmt.Sprintf("%d %s", code, http.StatusText(code))
}

func itoa(i int) string { return fmt.Sprint(i) }

// kindClass is the CSS class of a kind of number (n-token, n-id, n-logit,
// n-prob), or none.
func kindClass(kind string) string {
	if kind == "" {
		return ""
	}
	return "n-" + kind
}
