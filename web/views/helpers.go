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
