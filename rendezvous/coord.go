package rendezvous

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lockbench/lockbench/engine"
	"github.com/lockbench/lockbench/result"
)

// Defaults of Options.
const (
	// DefaultWait bounds how long a shard waits for the others at each
	// meeting.
	DefaultWait = 2 * time.Minute
	// Lead is how far ahead of the publishing moment shard 0 sets a cell's
	// start, so that every shard hears of it before it comes.
	Lead = 300 * time.Millisecond
	// poll is how often a shard waiting to start or finish looks at the
	// board; settlePoll how often it looks during a burst's hand-off,
	// which every hand-off waits for.
	poll       = time.Millisecond
	settlePoll = 250 * time.Microsecond
)

// Options configure a Coordinator.
type Options struct {
	Index, Count int
	// PlanHash identifies the plan; shard 0 refuses a shard of another.
	PlanHash string
	// Wait bounds each meeting. Default DefaultWait.
	Wait time.Duration
	// StartAt, if set, is the first cell's start: no meeting for it.
	StartAt time.Time
}

// Coordinator is engine.Coordinator over Boards. Shard 0 publishes each
// cell's start once every shard has said it is ready; every value it
// publishes carries the nonces of the shards it saw, so a shard never
// takes a value left by an earlier run for its own. Shards of a rerun of
// one plan meet under the same keys, and an earlier run's ready key
// outlives its shard for a while: shard 0 first publishes the nonces it
// saw without a start (pending) and gives the start only once every shard
// has acknowledged them, taking up a shard's new nonce and asking again
// when the one it saw was an earlier run's. A cell meets on the
// first board whose server it does not measure, so that the meeting's
// traffic stays out of the servers' counters where the plan allows.
type Coordinator struct {
	boards []*clocked
	o      Options
	nonce  string

	mu     sync.Mutex
	gens   map[string]string // cell → the generation shard 0 published
	seq    atomic.Int64
	usedAt atomic.Bool
}

// clocked is a board with this shard's clock offset from its server.
type clocked struct {
	b    Board
	skew result.Skew
	// offset is the server's clock minus ours.
	offset time.Duration
}

// New estimates this shard's clock offset from each board's server and
// returns a coordinator over boards (best first, see OpenBoards).
func New(ctx context.Context, boards []Board, o Options) (*Coordinator, error) {
	if o.Wait <= 0 {
		o.Wait = DefaultWait
	}
	var n [6]byte
	rand.Read(n[:])
	c := &Coordinator{o: o, nonce: hex.EncodeToString(n[:]), gens: map[string]string{}}
	for _, b := range boards {
		x := &clocked{b: b}
		if err := x.estimate(ctx); err != nil {
			return nil, err
		}
		c.boards = append(c.boards, x)
	}
	if len(c.boards) == 0 {
		return nil, fmt.Errorf("shard: no board to meet on")
	}
	return c, nil
}

// Skew is this shard's clock offset from the first board's server: the
// one clock every shard's grants are put on for the merge.
func (c *Coordinator) Skew() result.Skew { return c.boards[0].skew }

// board is where meeting m takes place: the first board on a server of a
// kind the cell does not measure, or the first.
func (c *Coordinator) board(m engine.Meeting) *clocked {
	for _, x := range c.boards {
		if !slices.Contains(m.Kinds, x.b.Kind()) {
			return x
		}
	}
	return c.boards[0]
}

// estimate reads the server's clock a number of times and keeps the read
// with the shortest round trip: the offset is known within half of it,
// plus the clock's resolution.
func (x *clocked) estimate(ctx context.Context) error {
	const samples = 16
	best := time.Duration(1<<63 - 1)
	for range samples {
		t0 := time.Now()
		st, res, err := x.b.Clock(ctx)
		t1 := time.Now()
		if err != nil {
			return fmt.Errorf("shard: reading %s's clock: %w", x.b, err)
		}
		rtt := t1.Sub(t0)
		if rtt >= best {
			continue
		}
		best = rtt
		mid := t0.Add(rtt / 2)
		// A clock of resolution res reads the start of its tick: its
		// middle is res/2 later.
		x.offset = st.Add(res / 2).Sub(mid)
		x.skew = result.Skew{OffsetUs: float64(x.offset) / 1e3, BoundUs: float64(rtt/2+res/2) / 1e3,
			Against: x.b.String(), Samples: samples}
	}
	return nil
}

func (c *Coordinator) me() string { return strconv.Itoa(c.o.Index) }

// Start is engine.Coordinator's: say ready, then (shard 0) wait for every
// shard and publish the start, or (others) wait for it.
func (c *Coordinator) Start(ctx context.Context, m engine.Meeting) (time.Time, error) {
	x, cell := c.board(m), m.Key
	if !c.o.StartAt.IsZero() && c.usedAt.CompareAndSwap(false, true) {
		c.setGen(cell, "at-"+c.o.StartAt.Format(time.RFC3339Nano))
		return c.o.StartAt, nil
	}
	ready := c.nonce + " " + c.o.PlanHash
	if err := x.b.Put(ctx, cell+"/ready/"+c.me(), ready, true); err != nil {
		return time.Time{}, err
	}
	if c.o.Index == 0 {
		return c.publish(ctx, x, cell)
	}
	var at time.Time
	var acked string
	refreshed := time.Now()
	err := c.wait(ctx, "shard 0", poll, func() (bool, error) {
		// Put again: a passing key on Redis lives only so long.
		if time.Since(refreshed) > passingTTL/4 {
			refreshed = time.Now()
			if err := x.b.Put(ctx, cell+"/ready/"+c.me(), ready, true); err != nil {
				return false, err
			}
		}
		v, ok, err := x.b.Get(ctx, cell+"/start")
		if !ok || err != nil || !strings.Contains(v, c.nonce) {
			return false, err
		}
		if strings.HasSuffix(v, pending) {
			if v != acked {
				acked = v
				return false, x.b.Put(ctx, cell+"/ack/"+c.me(), v, false)
			}
			return false, nil
		}
		ns, err := strconv.ParseInt(v[strings.LastIndexByte(v, ' ')+1:], 10, 64)
		if err != nil {
			return false, fmt.Errorf("shard: start of %s: %q: %w", cell, v, err)
		}
		c.setGen(cell, v)
		at = time.Unix(0, ns).Add(-x.offset)
		return true, nil
	})
	return at, err
}

// pending ends a start value that names the shards but gives no start
// yet: each shard it names acknowledges it.
const pending = " -"

// publish is shard 0's part of Start.
func (c *Coordinator) publish(ctx context.Context, x *clocked, cell string) (time.Time, error) {
	nonces := make([]string, c.o.Count)
	nonces[0] = c.nonce
	for j := 1; j < c.o.Count; j++ {
		err := c.wait(ctx, fmt.Sprintf("shard %d/%d", j, c.o.Count), poll, func() (bool, error) {
			nonce, ok, err := c.ready(ctx, x, cell, j)
			nonces[j] = nonce
			return ok, err
		})
		if err != nil {
			return time.Time{}, err
		}
	}
	for {
		again, err := c.acknowledged(ctx, x, cell, nonces)
		if err != nil {
			return time.Time{}, err
		}
		if !again {
			break
		}
	}
	at := time.Now().Add(Lead)
	v := strings.Join(nonces, ",") + " " + strconv.FormatInt(at.Add(x.offset).UnixNano(), 10)
	if err := x.b.Put(ctx, cell+"/start", v, false); err != nil {
		return time.Time{}, err
	}
	c.setGen(cell, v)
	return at, nil
}

// ready reads shard j's ready key: its nonce, once it has put one.
func (c *Coordinator) ready(ctx context.Context, x *clocked, cell string, j int) (string, bool, error) {
	v, ok, err := x.b.Get(ctx, cell+"/ready/"+strconv.Itoa(j))
	if !ok || err != nil {
		return "", false, err
	}
	nonce, plan, _ := strings.Cut(v, " ")
	if plan != c.o.PlanHash {
		return "", false, fmt.Errorf("shard: shard %d/%d runs another plan (plan hash %s, here %s)", j, c.o.Count, plan, c.o.PlanHash)
	}
	return nonce, true, nil
}

// acknowledged publishes nonces as pending and waits until every shard
// has acknowledged them. A shard whose ready key meanwhile holds another
// nonce — the one seen was left by an earlier run of the plan — is taken
// up in nonces, and again says to publish anew.
func (c *Coordinator) acknowledged(ctx context.Context, x *clocked, cell string, nonces []string) (again bool, err error) {
	v := strings.Join(nonces, ",") + pending
	if err := x.b.Put(ctx, cell+"/start", v, false); err != nil {
		return false, err
	}
	for j := 1; j < c.o.Count && !again; j++ {
		err := c.wait(ctx, fmt.Sprintf("shard %d/%d (to acknowledge the start)", j, c.o.Count), poll, func() (bool, error) {
			if a, ok, err := x.b.Get(ctx, cell+"/ack/"+strconv.Itoa(j)); err != nil || (ok && a == v) {
				return err == nil, err
			}
			nonce, ok, err := c.ready(ctx, x, cell, j)
			if ok && nonce != nonces[j] {
				nonces[j], again = nonce, true
				return true, nil
			}
			return false, err
		})
		if err != nil {
			return false, err
		}
	}
	return again, nil
}

func (c *Coordinator) setGen(cell, v string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gens[cell] = v
}

func (c *Coordinator) gen(cell string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.gens[cell]
}

// Done is engine.Coordinator's: say done with this cell's generation, and
// wait until every shard has.
func (c *Coordinator) Done(ctx context.Context, m engine.Meeting) error {
	x, cell := c.board(m), m.Key
	g := c.gen(cell)
	if err := x.b.Put(ctx, cell+"/done/"+c.me(), g, false); err != nil {
		return err
	}
	return c.all(ctx, x, cell+"/done/", g, "finish "+cell, poll)
}

// all waits until every other shard's key prefix+j holds want.
func (c *Coordinator) all(ctx context.Context, x *clocked, prefix, want, what string, every time.Duration) error {
	for j := range c.o.Count {
		if j == c.o.Index {
			continue
		}
		err := c.wait(ctx, fmt.Sprintf("shard %d/%d (to %s)", j, c.o.Count, what), every, func() (bool, error) {
			v, ok, err := x.b.Get(ctx, prefix+strconv.Itoa(j))
			return ok && v == want, err
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// Settle is engine.Coordinator's: post a request, settle here, and wait
// for every other shard's answer to it.
func (c *Coordinator) Settle(ctx context.Context, m engine.Meeting, local func(context.Context)) error {
	x, cell := c.board(m), m.Key
	req := c.nonce + "." + strconv.FormatInt(c.seq.Add(1), 10)
	if err := x.b.Put(ctx, cell+"/settle", req, false); err != nil {
		return err
	}
	local(ctx)
	return c.all(ctx, x, cell+"/settled/", req, "settle "+cell, settlePoll)
}

// Serve is engine.Coordinator's: answer each new settle request of
// another shard once this shard's waiters have settled.
func (c *Coordinator) Serve(ctx context.Context, m engine.Meeting, local func(context.Context)) {
	x, cell := c.board(m), m.Key
	last := ""
	t := time.NewTicker(settlePoll)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		v, ok, err := x.b.Get(ctx, cell+"/settle")
		if err != nil || !ok || v == last || strings.HasPrefix(v, c.nonce+".") {
			continue
		}
		local(ctx)
		if x.b.Put(ctx, cell+"/settled/"+c.me(), v, false) == nil {
			last = v
		}
	}
}

// wait polls done until it says so, fails, or o.Wait passes; the error
// then names who did not come.
func (c *Coordinator) wait(ctx context.Context, who string, every time.Duration, done func() (bool, error)) error {
	deadline := time.Now().Add(c.o.Wait)
	t := time.NewTimer(every)
	defer t.Stop()
	for {
		ok, err := done()
		if err != nil {
			return err
		}
		if ok {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("shard %d/%d: %s did not arrive within %v", c.o.Index, c.o.Count, who, c.o.Wait)
		}
		t.Reset(every)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
}
