package sandbox

import (
	"context"
	"fmt"
	"testing"
)

// A port taken between the probe and the server's bind costs a retry, not
// the run.
func TestStartSurvivesATakenPort(t *testing.T) {
	tries := 0
	err := retryPorts(context.Background(), func(int) error {
		tries++
		if tries < 3 {
			return fmt.Errorf("redis on 127.0.0.1:1 %w: bind: address in use", errExitedAtStart)
		}
		return nil
	})
	if err != nil || tries != 3 {
		t.Fatalf("after %d tries: %v", tries, err)
	}
}
