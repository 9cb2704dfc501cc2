// Command estimate prints the point estimate and 95 % interval of the
// values given as arguments, by the same code a run's rounds use
// (result.EstimateOf): the median with its order-statistic interval from
// six values, the geometric mean with a t interval on logs below. It lets
// the measurement scripts state their figures with intervals.
//
//	go run ./cmd/estimate 0.91 0.88 0.93 0.90 0.95
//	0.91 0.88 0.95 t on logs
package main

import (
	"fmt"
	"io"
	"os"
	"strconv"

	"github.com/lockbench/lockbench/result"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "estimate:", err)
		os.Exit(2)
	}
}

func run(args []string, w io.Writer) error {
	if len(args) == 0 {
		return fmt.Errorf("usage: estimate VALUE...")
	}
	vs := make([]float64, len(args))
	for i, a := range args {
		v, err := strconv.ParseFloat(a, 64)
		if err != nil {
			return fmt.Errorf("%q is not a number", a)
		}
		vs[i] = v
	}
	e := result.EstimateOf(vs)
	_, err := fmt.Fprintf(w, "%.3g %.3g %.3g %s\n", e.Point, e.Low, e.High, e.Method)
	return err
}
