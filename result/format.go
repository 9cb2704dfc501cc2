package result

import "fmt"

// Dur formats microseconds for a table: 850µs, 12.3ms, 4.1s.
func Dur(us float64) string {
	switch {
	case us <= 0:
		return "0"
	case us < 1000:
		return fmt.Sprintf("%.0fµs", us)
	case us < 10_000:
		return fmt.Sprintf("%.2fms", us/1000)
	case us < 1_000_000:
		return fmt.Sprintf("%.1fms", us/1000)
	default:
		return fmt.Sprintf("%.2fs", us/1e6)
	}
}
