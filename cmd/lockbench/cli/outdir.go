package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/lockbench/lockbench/result"
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

// mergeDirs refuses a shard directory that is no results directory, and
// a merge into one of the directories it reads: clearing it (--force) or
// writing over it would lose the shard.
func mergeDirs(out string, inputs []string) error {
	for _, in := range inputs {
		if _, err := os.Stat(filepath.Join(in, result.MetaFile)); err != nil {
			return fmt.Errorf("%w: merge: %s is not a results directory (no %s)", errUsage, in, result.MetaFile)
		}
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

// dropUnused removes what a run that measured nothing left in its results
// directory — nothing, or only meta.json — so that an interrupted start
// leaves no empty results behind; a directory the user made before the
// run (existedBefore) stays, as it was. Anything else in it is kept.
func dropUnused(dir string, existedBefore bool) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range ents {
		if e.Name() != result.MetaFile {
			return
		}
	}
	os.Remove(filepath.Join(dir, result.MetaFile))
	if !existedBefore {
		os.Remove(dir)
	}
}
