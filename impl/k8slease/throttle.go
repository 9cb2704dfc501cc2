package k8slease

import (
	"context"
	"sync"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	coordclient "k8s.io/client-go/kubernetes/typed/coordination/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/flowcontrol"

	"github.com/lockbench/lockbench/impl"
)

// A controller's leader election renews through the controller's own
// client, whose client-side rate limiter its other traffic shares:
// "Waited for 22.9s due to client-side throttling … Failed to update
// lock" (kube-vip#563), leadership lost (controller-runtime#3092); the
// fix is a client of its own for the election (kubernetes-csi
// external-snapshotter#343). BackgroundQPS is that other traffic, per
// candidate; ElectionClient says whether the election shares its limiter.
var (
	BackgroundQPS = impl.IntOption("k8s-background-qps", 0, 0, 100000,
		"Kubernetes Lease: requests a second of each candidate's other traffic (a controller's own gets), sent through the client and rate limiter its leader election uses unless --k8s-election-client own")
	ElectionClient = impl.ChoiceOption("k8s-election-client", "shared",
		"Kubernetes Lease: shared: leader election and the --k8s-background-qps traffic share one client and rate limiter, as a controller's manager does; own: the election has a client of its own", "shared", "own")
)

// backgroundInflight bounds the other traffic's requests waiting or on
// the wire: a controller's workers are many, not unbounded.
const backgroundInflight = 64

// throttle makes the client of the candidate's other traffic, when it
// has any, and says how the election's client is limited: rc's limiter
// is shared with that traffic, or (own) one of its own. The traffic runs
// while the candidate leads, as a controller's workers start once it is
// elected (Locker.lead).
func (l *Locker) throttle(rc *rest.Config) error {
	rate := l.cfg.Int(BackgroundQPS)
	if rate <= 0 || l.cfg.Client < 0 {
		return nil
	}
	other := rest.CopyConfig(rc)
	other.WrapTransport = nil // not the lock's requests: not counted as its round trips
	other.UserAgent = "lockbench-k8s-background"
	if rc.QPS >= 0 {
		qps, burst := rc.QPS, rc.Burst
		if qps == 0 {
			qps, burst = rest.DefaultQPS, rest.DefaultBurst
		}
		limiter := flowcontrol.NewTokenBucketRateLimiter(qps, burst)
		other.RateLimiter = limiter
		if l.cfg.Option(ElectionClient) == "shared" {
			rc.RateLimiter = limiter
		}
	}
	c, err := coordclient.NewForConfig(other)
	if err != nil {
		return err
	}
	l.other = c.Leases(l.ns)
	return nil
}

// lead runs the candidate's other traffic, if it has any, until ctx (the
// leadership's) ends.
func (l *Locker) lead(ctx context.Context) {
	if l.other != nil {
		background(ctx, l.other, l.cfg.Int(BackgroundQPS))
	}
}

// background sends rate gets a second, each on its own goroutine, at most
// backgroundInflight at a time, until ctx ends.
func background(ctx context.Context, leases coordclient.LeaseInterface, rate int) {
	t := time.NewTicker(max(time.Second/time.Duration(rate), time.Microsecond))
	defer t.Stop()
	sem := make(chan struct{}, backgroundInflight)
	var wg sync.WaitGroup
	defer wg.Wait()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		select {
		case sem <- struct{}{}:
			wg.Go(func() {
				defer func() { <-sem }()
				leases.Get(ctx, "lockbench-background", metav1.GetOptions{})
			})
		default: // as many waiting as a controller's workers
		}
	}
}

// renewals are a leader's renewals as its elector made them: each
// Update while it leads, timed from the call (client-side throttling
// included) to the answer.
type renewals struct {
	mu   sync.Mutex
	hist *hdrhistogram.Histogram // µs
	// late renewals took longer than RetryPeriod; missed ones failed
	// (RenewDeadline passed, or the apiserver refused); lost counts
	// leaderships the elector gave up before its release.
	late, missed, lost int64
}

func newRenewals() *renewals { return &renewals{hist: impl.NewHistogram()} }

func (r *renewals) add(d, retry time.Duration, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.hist.RecordValue(max(d.Microseconds(), 1))
	if d > retry {
		r.late++
	}
	if err != nil {
		r.missed++
	}
}

func (r *renewals) leadershipLost() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lost++
}

// Histograms gives the renewals' latency (renew_ms is in the report's
// unit; the histogram holds µs, as the harness's do).
func (l *Locker) Histograms() map[string]*hdrhistogram.Histogram {
	l.renew.mu.Lock()
	defer l.renew.mu.Unlock()
	if l.renew.hist.TotalCount() == 0 {
		return nil
	}
	return map[string]*hdrhistogram.Histogram{"renew_ms": hdrhistogram.Import(l.renew.hist.Export())}
}

// Vectors gives the renewals late and missed, and the leaderships lost:
// renewals = [late, missed, leaderships lost].
func (l *Locker) Vectors() map[string][]int64 {
	l.renew.mu.Lock()
	defer l.renew.mu.Unlock()
	if l.renew.hist.TotalCount() == 0 && l.renew.lost == 0 {
		return nil
	}
	return map[string][]int64{"renewals": {l.renew.late, l.renew.missed, l.renew.lost}}
}

// ResetDistributions empties them before a cell.
func (l *Locker) ResetDistributions() {
	l.renew.mu.Lock()
	defer l.renew.mu.Unlock()
	l.renew.hist.Reset()
	l.renew.late, l.renew.missed, l.renew.lost = 0, 0, 0
}
