package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// interruptible runs f and returns its error, or ctx's as soon as ctx
// ends: f only reads, or writes each file atomically (result.WriteFileAtomic),
// so leaving it unfinished when the process exits loses nothing and leaves
// at most a hidden .tmp file, which --force recognises.
func interruptible(ctx context.Context, f func() error) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("interrupted: %w", err)
	}
	done := make(chan error, 1)
	go func() { done <- f() }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return fmt.Errorf("interrupted: %w", ctx.Err())
	}
}

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
