package cli

import (
	"context"
	"fmt"
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
