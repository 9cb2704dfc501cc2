package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// existed says whether dir exists now, before a command makes or fills it.
func existed(dir string) bool {
	_, err := os.Stat(dir)
	return err == nil
}

// clearOut empties a results directory a command wrote only in part, and
// removes it when the command made it (existedBefore false): a user's own
// directory stays, empty.
func clearOut(dir string, existedBefore bool) error {
	if !existedBefore {
		if err := os.RemoveAll(dir); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		return nil
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	var errs []error
	for _, e := range ents {
		errs = append(errs, os.RemoveAll(filepath.Join(dir, e.Name())))
	}
	return errors.Join(errs...)
}

// notAnInput refuses a merge into one of the directories it reads:
// clearing it (--force) or writing over it would lose the shard.
func notAnInput(out string, inputs []string) error {
	for _, in := range inputs {
		if samePath(out, in) {
			return fmt.Errorf("%w: merge --out %s is one of the shards being merged; name a new directory", errUsage, out)
		}
	}
	return nil
}

func samePath(a, b string) bool {
	if fa, err := os.Stat(a); err == nil {
		if fb, err := os.Stat(b); err == nil {
			return os.SameFile(fa, fb)
		}
	}
	aa, err1 := filepath.Abs(a)
	ab, err2 := filepath.Abs(b)
	return err1 == nil && err2 == nil && aa == ab
}
