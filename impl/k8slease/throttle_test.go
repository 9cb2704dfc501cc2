package k8slease_test

import (
	"context"
	"errors"
	"maps"
	"testing"
	"time"

	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/impl/k8slease"
	"github.com/lockbench/lockbench/sandboxtest"
)

// A leader whose election shares its client's rate limiter with the
// client's other traffic (which starts once it leads, as a controller's
// workers do) renews behind that traffic: at 40 requests a
// second against client-go's default limit of 5, its renewals wait past
// RenewDeadline and it gives the leadership up before its release
// (kube-vip#563). The same leader with an election client of its own
// renews on time and keeps it (external-snapshotter#343's fix).
func TestThrottledRenewalsLoseTheLeadershipOnlyWhenTheClientIsShared(t *testing.T) {
	servers := sandboxtest.Start(t, k8slease.Need)
	for _, tc := range []struct {
		election string
		lost     bool
	}{{"shared", true}, {"own", false}} {
		t.Run(tc.election, func(t *testing.T) {
			opts := map[string]string{
				"k8s-lease-duration": "3s", "k8s-renew-deadline": "2s", "k8s-retry-period": "200ms",
				"k8s-qps": "0", "k8s-background-qps": "40", "k8s-election-client": tc.election,
			}
			l, err := k8slease.New(context.Background(), impl.Config{Servers: servers, Namespace: t.Name(), Client: 1, Options: maps.Clone(opts)})
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			k := l.(*k8slease.Locker)
			lease, err := k.Acquire(context.Background(), "leader")
			if err != nil {
				t.Fatal(err)
			}
			time.Sleep(5 * time.Second)
			err = lease.Release(context.Background())
			if lost := errors.Is(err, impl.ErrLockLost); lost != tc.lost {
				t.Errorf("release: %v; want the leadership lost %v", err, tc.lost)
			}
			v := k.Vectors()["renewals"]
			if len(v) != 3 || (v[2] > 0) != tc.lost {
				t.Fatalf("renewals [late, missed, lost] = %v; want a loss %v", v, tc.lost)
			}
			h := k.Histograms()["renew_ms"]
			if tc.lost && v[0]+v[1] == 0 || !tc.lost && (h == nil || h.TotalCount() < 5 || v[1] > 0) {
				t.Errorf("renewals %v, %d timed: want late or missed ones when shared, at least 5 on time when own", v, h.TotalCount())
			}
			if h != nil {
				t.Logf("%s: renewals [late missed lost] %v, p50 %v ms, max %v ms", tc.election, v,
					float64(h.ValueAtQuantile(50))/1000, float64(h.Max())/1000)
			}
		})
	}
}
