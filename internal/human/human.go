// Package human formats byte sizes and counts for people.
package human

import (
	"fmt"
	"strconv"
)

// Bytes formats n as B, KiB, MiB or GiB.
func Bytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.2f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.2f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}

// Count formats n with thousand/million/billion words.
func Count(n int64) string {
	switch {
	case n >= 1e9:
		return fmt.Sprintf("%.2f billion", float64(n)/1e9)
	case n >= 1e6:
		return fmt.Sprintf("%.2f million", float64(n)/1e6)
	case n >= 1e3:
		return fmt.Sprintf("%.1f thousand", float64(n)/1e3)
	}
	return strconv.FormatInt(n, 10)
}
