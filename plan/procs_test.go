package plan

import "testing"

// With its servers beside it, lockbench leaves them a core each, up to
// half the machine; alone, or on one core, it takes every core.
func TestSharedProcs(t *testing.T) {
	for _, tc := range []struct{ cpus, servers, want int }{
		{2, 0, 2}, {2, 1, 1}, {2, 9, 1}, {1, 3, 1}, {8, 1, 7}, {8, 5, 4}, {8, 9, 4}, {16, 3, 13},
	} {
		if got := sharedProcs(tc.cpus, tc.servers); got != tc.want {
			t.Errorf("%d cores, %d servers: GOMAXPROCS %d, want %d", tc.cpus, tc.servers, got, tc.want)
		}
	}
}
