package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// checkInputs checks the paths a subcommand was named to read before it
// reads any: one that is missing or cannot be opened is the caller's input
// — exit 2, in every subcommand (merge always answered so) — while what a
// readable path holds is judged by the command (exit 1 when it cannot be
// used).
func checkInputs(cmd string, paths ...string) error {
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			why := err
			var pe *fs.PathError
			if errors.As(err, &pe) {
				why = pe.Err
			}
			return fmt.Errorf("%w: %s: %s: %v", errUsage, cmd, p, why)
		}
		f.Close()
	}
	return nil
}
