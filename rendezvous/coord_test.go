package rendezvous

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lockbench/lockbench/engine"
	_ "github.com/lockbench/lockbench/scenarios" // the load scenarios
)

// memBoard is a Board in memory, shared by the shards of a test.
type memBoard struct {
	mu sync.Mutex
	kv map[string]string
}

func (b *memBoard) Put(_ context.Context, key, value string, _ bool) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.kv[key] = value
	return nil
}

func (b *memBoard) Get(_ context.Context, key string) (string, bool, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	v, ok := b.kv[key]
	return v, ok, nil
}

func (b *memBoard) has(key string) bool { _, ok, _ := b.Get(context.Background(), key); return ok }

func (b *memBoard) Clock(context.Context) (time.Time, time.Duration, error) {
	return time.Now(), time.Microsecond, nil
}
func (b *memBoard) Close() error   { return nil }
func (b *memBoard) Kind() string   { return "mem" }
func (b *memBoard) String() string { return "mem" }

// A rerun of a plan meets under the keys of the run before, whose shard
// 1's ready key outlives it for a while. Shard 0 of the rerun, coming
// first, must not take that key for its partner's: both shards of the
// rerun meet and start together.
func TestARerunMeetsDespiteAnEarlierRunsKeys(t *testing.T) {
	t.Parallel()
	b := &memBoard{kv: map[string]string{}}
	m := engine.Meeting{Key: "plan-abc-0"}
	b.kv[m.Key+"/ready/1"] = "0123456789ab plan" // left by the run before
	coord := func(i int) *Coordinator {
		c, err := New(context.Background(), []Board{b}, Options{Index: i, Count: 2, PlanHash: "plan", Wait: 5 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	c0, c1 := coord(0), coord(1)
	var at0 time.Time
	var err0 error
	done := make(chan struct{})
	go func() {
		defer close(done)
		at0, err0 = c0.Start(context.Background(), m)
	}()
	// Shard 1 of the rerun arrives once shard 0 has already read the old
	// key and published.
	for !b.has(m.Key + "/start") {
		time.Sleep(time.Millisecond)
	}
	at1, err1 := c1.Start(context.Background(), m)
	<-done
	if err0 != nil || err1 != nil {
		t.Fatalf("shard 0: %v; shard 1: %v", err0, err1)
	}
	if d := at0.Sub(at1); d > time.Millisecond || d < -time.Millisecond {
		t.Errorf("the shards start %v apart (%v, %v)", d, at0, at1)
	}
	if v := b.kv[m.Key+"/start"]; !strings.Contains(v, c0.nonce) || !strings.Contains(v, c1.nonce) || strings.Contains(v, "0123456789ab") {
		t.Errorf("start %q names the earlier run's shard or not this run's", v)
	}
	// And they finish together.
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i, c := range []*Coordinator{c0, c1} {
		wg.Go(func() { errs[i] = c.Done(context.Background(), m) })
	}
	wg.Wait()
	if errs[0] != nil || errs[1] != nil {
		t.Errorf("done: %v", errs)
	}
}
