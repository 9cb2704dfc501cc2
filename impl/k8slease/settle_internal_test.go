package k8slease

import (
	"context"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

// A candidate is settled only when its last poll found another holder:
// one whose Get found the Lease free, its own or run out is about to
// write, and counting it settled let the abandon scenario's next client
// race the first to the Lease (seen in CI: client 1 granted first).
func TestSettledOnlyWhenAnotherHolds(t *testing.T) {
	ctx := context.Background()
	cs := fake.NewSimpleClientset()
	l := &Locker{}
	at := &attempt{id: "me-1"}
	g := &leasesGetter{LeasesGetter: cs.CoordinationV1(), l: l, at: at}
	leases := g.Leases("ns")
	l.acquiring.Store(true)

	put := func(holder string, renewed time.Time) {
		t.Helper()
		d := int32(2)
		lease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "x", Namespace: "ns"},
			Spec: coordinationv1.LeaseSpec{HolderIdentity: &holder, LeaseDurationSeconds: &d, RenewTime: &metav1.MicroTime{Time: renewed}}}
		_ = cs.CoordinationV1().Leases("ns").Delete(ctx, "x", metav1.DeleteOptions{})
		if _, err := cs.CoordinationV1().Leases("ns").Create(ctx, lease, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	poll := func() bool {
		_, _ = leases.Get(ctx, "x", metav1.GetOptions{})
		return l.Settled()
	}
	if poll() {
		t.Error("settled after a Get that found no Lease: it creates one next")
	}
	now := time.Now()
	for _, c := range []struct {
		holder  string
		renewed time.Time
		want    bool
	}{
		{"other-1", now, true},
		{"", now, false},                              // released: it writes next
		{"me-1", now, false},                          // its own
		{"other-1", now.Add(-3 * time.Second), false}, // run out: it takes over
		{"other-2", now.Add(-time.Second), true},
	} {
		put(c.holder, c.renewed)
		if got := poll(); got != c.want {
			t.Errorf("holder %q renewed %v ago: settled %v, want %v", c.holder, now.Sub(c.renewed).Round(time.Second), got, c.want)
		}
	}
	l.acquiring.Store(false)
	if l.Settled() {
		t.Error("settled while not acquiring")
	}
	if n := l.polls.Load(); n != 6 {
		t.Errorf("%d polls counted, want 6", n)
	}
}
