package natskv

import (
	"context"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/lockbench/lockbench/impl"
)

// The guarded register (impl.Guard) on NATS: one KV key per lock in the
// lock's bucket, its value the unfenced and fenced counters and the
// highest token seen ("u f h"). Each access reads the key and writes it
// back conditional on the revision it read (Update, or Create for the
// first), trying again when another writer came between: the fence check
// and the values replaced are those of the revision the write replaced,
// as the other kinds' registers take them in one step on the server.
// The keys sit outside every namespace's lock keys (guardPrefix), so
// neither a lock's watch nor the residue count sees them.

// guardPrefix opens every register key.
const guardPrefix = "lockbench_guard."

// guardTries bounds the conditional writes one access makes before it
// gives up: each retry means another writer's write succeeded.
const guardTries = 100

// Guard opens the guarded register on the server at addrs[0], on a
// connection of its own; it is Need's impl.GuardFunc.
func Guard(ctx context.Context, cfg impl.Config, addrs []string) (impl.Guard, error) {
	if len(addrs) == 0 {
		return nil, errors.New("nats-kv: guarded register: no server address")
	}
	cfg = cfg.WithDefaults()
	kv, nc, err := open(ctx, addrs[0], cfg.DialTimeout)
	if err != nil {
		return nil, err
	}
	return &guard{kv: kv, nc: nc, ns: cfg.Namespace}, nil
}

type guard struct {
	kv jetstream.KeyValue
	nc *nats.Conn
	ns string
}

// state is a register's value.
type state struct{ unfenced, fenced, highest int64 }

func (g *guard) key(lock string) string { return guardPrefix + Key(g.ns, lock) }

// update reads lock's state and writes next(state) back conditional on
// the revision read, until no other writer came between.
func (g *guard) update(ctx context.Context, lock string, next func(s state) state) (state, error) {
	key := g.key(lock)
	for range guardTries {
		var s state
		var rev uint64
		e, err := g.kv.Get(ctx, key)
		switch {
		case errors.Is(err, jetstream.ErrKeyNotFound):
		case err != nil:
			return state{}, err
		default:
			if _, err := fmt.Sscan(string(e.Value()), &s.unfenced, &s.fenced, &s.highest); err != nil {
				return state{}, fmt.Errorf("value %q: %w", e.Value(), err)
			}
			rev = e.Revision()
		}
		n := next(s)
		val := []byte(fmt.Sprint(n.unfenced, " ", n.fenced, " ", n.highest))
		if rev == 0 {
			_, err = g.kv.Create(ctx, key, val)
		} else {
			_, err = g.kv.Update(ctx, key, val, rev)
		}
		if err == nil {
			return s, nil
		}
		if !errors.Is(err, jetstream.ErrKeyExists) && !isWrongSequence(err) {
			return state{}, err
		}
	}
	return state{}, fmt.Errorf("%d writers came between a read and its write", guardTries)
}

// isWrongSequence reports whether err is JetStream's refusal of a write
// conditional on a revision that is no longer the key's last.
func isWrongSequence(err error) bool {
	var api *jetstream.APIError
	return errors.As(err, &api) && api.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequence
}

func (g *guard) Read(ctx context.Context, lock string, token uint64) (impl.Reading, error) {
	t := int64(token)
	s, err := g.update(ctx, lock, func(s state) state {
		s.highest = max(s.highest, t)
		return s
	})
	if err != nil {
		return impl.Reading{}, fmt.Errorf("nats-kv: guarded register %s: read: %w", lock, err)
	}
	return impl.Reading{Unfenced: s.unfenced, Fenced: s.fenced, Refused: s.highest > t}, nil
}

func (g *guard) Write(ctx context.Context, lock string, token uint64, r impl.Reading) (impl.Written, error) {
	t := int64(token)
	fence := func(s state) bool { return !r.Refused && t >= s.highest }
	s, err := g.update(ctx, lock, func(s state) state {
		n := state{unfenced: r.Unfenced + 1, fenced: s.fenced, highest: s.highest}
		if fence(s) {
			n.fenced, n.highest = r.Fenced+1, max(s.highest, t)
		}
		return n
	})
	if err != nil {
		return impl.Written{}, fmt.Errorf("nats-kv: guarded register %s: write: %w", lock, err)
	}
	w := impl.Written{UnfencedMoved: s.unfenced - r.Unfenced}
	if fence(s) {
		w.FencedAccepted, w.FencedMoved = true, s.fenced-r.Fenced
	}
	return w, nil
}

func (g *guard) Values(ctx context.Context, lock string) (fenced, unfenced int64, err error) {
	e, err := g.kv.Get(ctx, g.key(lock))
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return 0, 0, nil
	}
	if err != nil {
		return 0, 0, fmt.Errorf("nats-kv: guarded register %s: %w", lock, err)
	}
	var s state
	if _, err := fmt.Sscan(string(e.Value()), &s.unfenced, &s.fenced, &s.highest); err != nil {
		return 0, 0, fmt.Errorf("nats-kv: guarded register %s: value %q: %w", lock, e.Value(), err)
	}
	return s.fenced, s.unfenced, nil
}

func (g *guard) Close() error {
	g.nc.Close()
	return nil
}
