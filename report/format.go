package report

import (
	"fmt"
	"math"
	"strconv"
)

// commas formats n with thousands separators: 32640 → "32,640".
func commas(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := n < 0
	if neg {
		s = s[1:]
	}
	var out []byte
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, s[i])
	}
	if neg {
		return "-" + string(out)
	}
	return string(out)
}

// round rounds half to even, as fmt's %.0f does, so that the markdown and
// the text table agree.
func round(x float64) int64 { return int64(math.RoundToEven(x)) }

// perAcq formats a count per acquisition: two decimals, more digits for
// large values are not worth reading.
func perAcq(x float64) string {
	if x >= 100 {
		return commas(round(x))
	}
	return fmt.Sprintf("%.2f", x)
}

// plural is "1 client", "2 clients".
func plural(n int64, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return commas(n) + " " + word + "s"
}
