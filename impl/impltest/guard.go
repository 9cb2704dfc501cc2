package impltest

import (
	"context"
	"testing"
	"time"

	"github.com/lockbench/lockbench/impl"
)

// Register checks a server kind's guarded register (impl.Guard) against the
// servers at addrs, the same way for every kind: two holders of one lock
// that both read before either writes — the later token writing first —
// lose an update on the unfenced counter, which each write reports as the
// counter having moved under it, while the fenced one refuses the stale
// holder's write; a holder that reads after a higher token was shown is
// refused at the read; holders one after the other lose nothing; and
// every counter ends where the acknowledged increments less the moves say.
func Register(t *testing.T, open impl.GuardFunc, addrs []string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cfg := impl.Config{Namespace: "guard-" + t.Name()}.WithDefaults()
	dial := func() impl.Guard {
		g, err := open(ctx, cfg, addrs)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { g.Close() })
		return g
	}
	a, b := dial(), dial()
	const lock = "guarded"
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}

	// One after the other: 1, 2.
	for i, tok := range []uint64{1, 2} {
		r, err := a.Read(ctx, lock, tok)
		must(err)
		if r.Refused || r.Fenced != int64(i) || r.Unfenced != int64(i) {
			t.Fatalf("sequential read %d: %+v", i, r)
		}
		w, err := a.Write(ctx, lock, tok, r)
		must(err)
		if !w.FencedAccepted || w.FencedMoved != 0 || w.UnfencedMoved != 0 {
			t.Fatalf("sequential write %d: %+v", i, w)
		}
	}

	// Overlapping: a (token 3) and b (token 4) both read 2; b writes 3;
	// a's write overwrites b's increment unfenced and is refused fenced.
	ra, err := a.Read(ctx, lock, 3)
	must(err)
	rb, err := b.Read(ctx, lock, 4)
	must(err)
	if ra.Refused || rb.Refused || ra.Unfenced != 2 || rb.Unfenced != 2 {
		t.Fatalf("overlapping reads: %+v, %+v", ra, rb)
	}
	wb, err := b.Write(ctx, lock, 4, rb)
	must(err)
	wa, err := a.Write(ctx, lock, 3, ra)
	must(err)
	if !wb.FencedAccepted || wb.UnfencedMoved != 0 {
		t.Errorf("the later holder's write: %+v, want accepted, unmoved", wb)
	}
	if wa.FencedAccepted || wa.UnfencedMoved != 1 {
		t.Errorf("the stale holder's write: %+v, want refused fenced, moved by 1 unfenced", wa)
	}

	// A read with a token below the highest seen is refused.
	r, err := a.Read(ctx, lock, 3)
	must(err)
	if !r.Refused {
		t.Errorf("a read with token 3 after 4: %+v, want refused", r)
	}
	_, err = a.Write(ctx, lock, 3, r) // the unfenced counter still takes it
	must(err)

	fenced, unfenced, err := b.Values(ctx, lock)
	must(err)
	// Unfenced: 5 writes acknowledged, one moved by 1 → 4; fenced: 3 taken.
	if fenced != 3 || unfenced != 4 {
		t.Errorf("final values fenced %d, unfenced %d; want 3 and 4", fenced, unfenced)
	}
}
