package k8slease

import (
	"context"
	crand "crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	coordclient "k8s.io/client-go/kubernetes/typed/coordination/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/klog/v2"

	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/internal/serverkind"
)

// Module is the library this row calls.
const Module = "k8s.io/client-go"

func init() {
	impl.Register(impl.Driver{
		Name: "k8s-lease",
		Description: "Kubernetes Lease, client-go's LeaderElector (LeaseLock) with component-base's defaults: candidates " +
			"poll (Get every RetryPeriod, Update with the resourceVersion), a crashed leader waits out LeaseDuration",
		Library: Module,
		Needs:   []impl.Need{Need},
		Options: []impl.Option{LeaseDuration, RenewDeadline, RetryPeriod, QPS, Namespace, BackgroundQPS, ElectionClient},
		Caps:    impl.LeaseSession | impl.Fencing,
		Lease: func(cfg impl.Config) (time.Duration, string) {
			return cfg.Duration(LeaseDuration).Truncate(time.Second), "LeaseDuration"
		},
		Wait: func(cfg impl.Config) string {
			return "the next poll (RetryPeriod " + cfg.Duration(RetryPeriod).String() + ", jitter ×1–2.2)"
		},
		Short: map[string]string{
			LeaseDuration.Name: "2s", RenewDeadline.Name: "1s", RetryPeriod.Name: "50ms", QPS.Name: "-1",
		},
		New:      New,
		Validate: Validate,
		Cleanup:  Cleanup,
		Residue:  Residue,
	})
}

// Need is the apiserver the Leases live on (--kube, LOCKBENCH_KUBE).
var Need = impl.Need{Role: "kube", Kind: serverkind.KubeAPIServer, Count: 1,
	Usage: "Kubernetes API server address, host:port (HTTPS; bearer token from $LOCKBENCH_KUBE_TOKEN)"}

// The elector's settings, each with component-base's default (what
// kube-controller-manager and kube-scheduler run, and most operators copy).
var (
	LeaseDuration = impl.DurationOption("k8s-lease-duration", 15*time.Second, time.Second,
		"Kubernetes Lease: LeaseDuration, how long candidates wait on a leader that stopped renewing (whole seconds)")
	RenewDeadline = impl.DurationOption("k8s-renew-deadline", 10*time.Second, 10*time.Millisecond,
		"Kubernetes Lease: RenewDeadline, how long a leader keeps trying to renew before it gives up")
	RetryPeriod = impl.DurationOption("k8s-retry-period", 2*time.Second, 10*time.Millisecond,
		"Kubernetes Lease: RetryPeriod, how often candidates poll and a leader renews (jitter ×1–2.2)")
	// QPS is rest.Config's client-side rate limit; 0 is client-go's
	// default (5 requests a second, bursts of 10), which the default
	// timings never reach; -1 turns it off.
	QPS = impl.IntOption("k8s-qps", 0, -1, 100000,
		"Kubernetes Lease: each client's rest.Config QPS (0: client-go's default, 5 with bursts of 10; -1: no limit)")
	Namespace = impl.Option{Name: "k8s-namespace", Default: "default",
		Usage: "Kubernetes Lease: the namespace the Leases live in", Check: checkNamespace}
)

func checkNamespace(v string) error {
	if v == "" || len(v) > 63 || strings.Trim(v, "abcdefghijklmnopqrstuvwxyz0123456789-") != "" || v[0] == '-' || v[len(v)-1] == '-' {
		return fmt.Errorf("want a Kubernetes namespace (lower-case letters, digits and '-'); got %q", v)
	}
	return nil
}

// Validate refuses timings client-go refuses (LeaseDuration above
// RenewDeadline above 1.2×RetryPeriod) and a LeaseDuration that is not
// whole seconds: the Lease records it in seconds, so 1.5s would be kept as 1s.
func Validate(cfg impl.Config) error {
	ld, rd, rp := cfg.Duration(LeaseDuration), cfg.Duration(RenewDeadline), cfg.Duration(RetryPeriod)
	switch {
	case ld%time.Second != 0:
		return fmt.Errorf("k8s-lease: --k8s-lease-duration %v: a Lease keeps whole seconds", ld)
	case ld <= rd:
		return fmt.Errorf("k8s-lease: --k8s-lease-duration %v must be longer than --k8s-renew-deadline %v", ld, rd)
	case rd <= time.Duration(leaderelection.JitterFactor*float64(rp)):
		return fmt.Errorf("k8s-lease: --k8s-renew-deadline %v must be longer than %v×--k8s-retry-period %v", rd, leaderelection.JitterFactor, rp)
	}
	return nil
}

// cellLabel marks every Lease a cell's clients create, with a digest of
// the cell's namespace, so that Residue and Cleanup find them.
const cellLabel = "lockbench.dev/cell"

func cellOf(namespace string) string {
	sum := sha256.Sum256([]byte(namespace))
	return hex.EncodeToString(sum[:8])
}

// LeaseName is the Lease of lock name in a cell's namespace: a DNS
// subdomain, the cell's digest, then the lock's name as far as it is one.
func LeaseName(namespace, name string) string {
	clean := strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '-':
			return r
		case r >= 'A' && r <= 'Z':
			return r + 'a' - 'A'
		}
		return '-'
	}, name)
	out := "lb-" + cellOf(namespace) + "-" + strings.Trim(clean, "-")
	if clean != name || len(out) > 200 {
		sum := sha256.Sum256([]byte(name))
		out = out[:min(len(out), 180)] + "-" + hex.EncodeToString(sum[:6])
	}
	return strings.TrimRight(out, "-")
}

// Locker is one candidate: its own client and connection.
type Locker struct {
	leases   coordclient.LeasesGetter
	addr     string
	ns       string
	id       string // the client's; each acquisition's identity adds a number
	seq      int
	cfg      impl.Config
	counters impl.Counters

	// What the wrapped client sees of the acquisition in progress.
	acquiring atomic.Bool
	polls     atomic.Int64 // Gets sent in this acquisition
	inflight  atomic.Int64 // requests sent and not yet answered
	// blocked: the last Get found the Lease held by another candidate,
	// unexpired, so the elector waits a RetryPeriod before it polls again.
	// A Get that found the Lease free or expired is followed by a write.
	blocked atomic.Bool

	// closed makes every request fail once Close ran, so that electors
	// still running (a grant never released) neither renew nor release:
	// a closed client is gone, as a crashed one is.
	closed atomic.Bool
	mu     sync.Mutex
	runs   map[*grant]struct{} // grants whose electors run

	// renew times the renewals of the leaderships this client won;
	// other is the client of its other traffic (BackgroundQPS), nil
	// without any.
	renew *renewals
	other coordclient.LeaseInterface
}

// New makes one candidate's client, with a connection of its own (a dialer
// of its own keeps client-go from sharing a cached transport), and checks
// the apiserver answers for Leases before it returns.
func New(ctx context.Context, cfg impl.Config) (impl.Locker, error) {
	cfg = cfg.WithDefaults()
	if err := Validate(cfg); err != nil {
		return nil, err
	}
	addrs := cfg.Servers[Need.Role]
	if len(addrs) == 0 {
		return nil, errors.New("k8s-lease: no apiserver address")
	}
	l := &Locker{addr: addrs[0], ns: cfg.Option(Namespace), cfg: cfg, renew: newRenewals(),
		id: "lockbench-" + strconv.Itoa(cfg.Client) + "-" + hex.EncodeToString(random(4))}
	token := os.Getenv("LOCKBENCH_KUBE_TOKEN")
	if token == "" {
		token = serverkind.KubeToken
	}
	dialer := &net.Dialer{Timeout: cfg.DialTimeout, KeepAlive: 30 * time.Second}
	rc := &rest.Config{
		Host:            "https://" + l.addr,
		BearerToken:     token,
		TLSClientConfig: rest.TLSClientConfig{Insecure: true},
		Timeout:         cfg.Duration(RenewDeadline),
		Dial:            dialer.DialContext,
		WarningHandler:  rest.NoWarnings{},
		UserAgent:       "lockbench-k8s-lease",
		WrapTransport:   func(rt http.RoundTripper) http.RoundTripper { return &counting{rt: rt, l: l} },
	}
	if q := cfg.Int(QPS); q != 0 {
		rc.QPS, rc.Burst = float32(q), max(2*q, 1)
	}
	if err := l.throttle(rc); err != nil {
		return nil, fmt.Errorf("k8s-lease %s: %w", l.addr, err)
	}
	client, err := coordclient.NewForConfig(rc)
	if err != nil {
		return nil, fmt.Errorf("k8s-lease %s: %w", l.addr, err)
	}
	l.leases = client
	dctx, cancel := context.WithTimeout(ctx, cfg.DialTimeout)
	defer cancel()
	if _, err := client.Leases(l.ns).List(dctx, metav1.ListOptions{Limit: 1}); err != nil {
		return nil, classify(l.addr, err)
	}
	l.counters.RoundTrips.Store(0)
	return l, nil
}

func random(n int) []byte {
	b := make([]byte, n)
	crand.Read(b)
	return b
}

// classify marks an error that reached no apiserver as unreachable.
func classify(addr string, err error) error {
	var ne net.Error
	var oe *net.OpError
	if errors.As(err, &oe) || errors.As(err, &ne) && !apierrors.IsTimeout(err) {
		return fmt.Errorf("k8s-lease %s: %w: %w", addr, impl.ErrUnreachable, err)
	}
	if apierrors.IsUnauthorized(err) || apierrors.IsForbidden(err) {
		return fmt.Errorf("k8s-lease %s: %w (is $LOCKBENCH_KUBE_TOKEN a token this apiserver takes?)", addr, err)
	}
	return fmt.Errorf("k8s-lease %s: %w", addr, err)
}

// quiet is a context whose logger drops what the elector logs: a lost
// Update race is logged as an error, once per candidate per release.
func quiet(ctx context.Context) context.Context { return klog.NewContext(ctx, logr.Discard()) }

// Acquire runs a LeaderElector until it starts leading, as a controller's
// main does. Its Run lives as long as the context it is given, so it gets
// one that outlives this call, cancelled by ctx only while it still
// waits: a grant that comes as ctx ends is released by the elector
// itself (ReleaseOnCancel).
func (l *Locker) Acquire(ctx context.Context, name string) (impl.Lease, error) {
	lease := LeaseName(l.cfg.Namespace, name)
	// Each acquisition is a candidate of its own, as each start of a
	// controller is: an elector that finds its own identity in the Lease
	// takes it as still its own, keeping its leaseTransitions, so a
	// release that did not land followed by a new acquisition under the
	// same identity would be one grant to the Lease and two to the caller.
	l.seq++
	at := &attempt{id: l.id + "-" + strconv.Itoa(l.seq)}
	lock := &resourcelock.LeaseLock{
		LeaseMeta:  metav1.ObjectMeta{Name: lease, Namespace: l.ns},
		Client:     &leasesGetter{LeasesGetter: l.leases, l: l, at: at},
		LockConfig: resourcelock.ResourceLockConfig{Identity: at.id},
		Labels:     map[string]string{cellLabel: cellOf(l.cfg.Namespace)},
	}
	started, stopped := make(chan struct{}), make(chan struct{})
	le, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
		Lock:            lock,
		LeaseDuration:   l.cfg.Duration(LeaseDuration),
		RenewDeadline:   l.cfg.Duration(RenewDeadline),
		RetryPeriod:     l.cfg.Duration(RetryPeriod),
		ReleaseOnCancel: true,
		Name:            lease,
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(ctx context.Context) {
				at.leading.Store(true)
				close(started)
				l.lead(ctx)
			},
			OnStoppedLeading: func() {
				// Given up before its release: a renewal did not land
				// within RenewDeadline.
				if at.leading.Swap(false) && !at.releasing.Load() {
					l.renew.leadershipLost()
				}
			},
		},
	})
	if err != nil {
		return nil, fmt.Errorf("k8s-lease: %w", err)
	}
	l.polls.Store(0)
	l.blocked.Store(false)
	l.acquiring.Store(true)
	run, stop := context.WithCancel(quiet(context.WithoutCancel(ctx)))
	go func() { le.Run(run); close(stopped) }()
	select {
	case <-started:
		l.acquiring.Store(false)
		if impl.Expired(ctx) { // won as ctx ended: the elector gives it back
			stop()
			<-stopped
			l.counters.Retries.Add(l.polls.Load())
			return nil, impl.CtxErr(ctx)
		}
		l.counters.Retries.Add(max(l.polls.Load()-1, 0))
		return l.track(&grant{l: l, at: at, name: lease, stop: stop, stopped: stopped, token: at.token.Load()}), nil
	case <-stopped:
		// Run returned without leading: only its context ends it so.
		l.acquiring.Store(false)
		select {
		case <-started: // led, and lost it at once: Release will say so
			return l.track(&grant{l: l, at: at, name: lease, stop: stop, stopped: stopped, token: at.token.Load()}), nil
		default:
		}
		stop()
		return nil, fmt.Errorf("k8s-lease %s: %s: elector stopped before leading", l.addr, lease)
	case <-ctx.Done():
		stop()
		<-stopped
		l.acquiring.Store(false)
		l.counters.Retries.Add(l.polls.Load())
		return nil, ctx.Err()
	}
}

// Settled reports whether a candidate waits between polls: its last poll
// found another holder and nothing it sent is unanswered. A candidate whose
// Get found the Lease free is about to write, not waiting: counting it
// settled let the next candidate race it to the Lease.
func (l *Locker) Settled() bool {
	return l.acquiring.Load() && l.blocked.Load() && l.inflight.Load() == 0
}

// Counters returns this client's counters.
func (l *Locker) Counters() *impl.Counters { return &l.counters }

// track notes a grant whose elector runs until Release or Close.
func (l *Locker) track(g *grant) *grant {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.runs == nil {
		l.runs = map[*grant]struct{}{}
	}
	l.runs[g] = struct{}{}
	return g
}

func (l *Locker) untrack(g *grant) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.runs, g)
}

// errClosed is what a closed client's requests fail with.
var errClosed = errors.New("k8s-lease: client closed")

// Close stops the electors of grants never released without releasing
// them and drops the client's idle connections: a Lease it holds stays
// its until LeaseDuration passes without a renewal, as a crashed
// leader's does.
func (l *Locker) Close() error {
	l.closed.Store(true)
	l.mu.Lock()
	runs := l.runs
	l.runs = nil
	l.mu.Unlock()
	for g := range runs {
		g.stop()
	}
	if c, ok := l.leases.(*coordclient.CoordinationV1Client); ok {
		if hc, ok := c.RESTClient().(*rest.RESTClient); ok && hc.Client != nil {
			hc.Client.CloseIdleConnections()
		}
	}
	return nil
}

// attempt is one acquisition's candidate: its identity, and what its
// writes won.
type attempt struct {
	id       string
	token    atomic.Uint64 // leaseTransitions+1 of the write that made it the holder
	released atomic.Bool   // a write of an empty holder landed
	// leading: the elector leads, so its Updates are renewals;
	// releasing: its Release began, so its stop is not a loss.
	leading, releasing atomic.Bool
}

type grant struct {
	l       *Locker
	at      *attempt
	name    string
	stop    context.CancelFunc
	stopped chan struct{}
	token   uint64
	done    bool
}

// Fence is the Lease's leaseTransitions plus one as this grant wrote it:
// every grant to a new holder raises it.
func (g *grant) Fence() (uint64, bool) { return g.token, g.token > 0 }

// Release cancels the elector's context, which writes an empty holder
// (ReleaseOnCancel), and waits for its Run to return. An elector that had
// already stopped leading — it could not renew for RenewDeadline — means
// the lock was lost. A release whose write did not land (the apiserver
// did not answer within RenewDeadline) is an error: the Lease names this
// candidate until LeaseDuration passes, and client-go only logs it.
func (g *grant) Release(ctx context.Context) error {
	l := g.l
	if g.done {
		return fmt.Errorf("k8s-lease %s: %s: lease released twice", l.addr, g.name)
	}
	g.done = true
	g.at.releasing.Store(true)
	defer l.untrack(g)
	select {
	case <-g.stopped:
		g.stop()
		l.counters.Lost.Add(1)
		return fmt.Errorf("k8s-lease %s: %s: the elector stopped leading before the release: %w", l.addr, g.name, impl.ErrLockLost)
	default:
	}
	g.stop()
	select {
	case <-g.stopped:
		if !g.at.released.Load() {
			return fmt.Errorf("k8s-lease %s: release %s: the empty holder was not written; the Lease stays %s's until LeaseDuration passes", l.addr, g.name, g.at.id)
		}
		return nil
	case <-ctx.Done():
		return fmt.Errorf("k8s-lease %s: release %s: %w", l.addr, g.name, ctx.Err())
	}
}

// counting counts every request the client sends.
type counting struct {
	rt http.RoundTripper
	l  *Locker
}

func (c *counting) RoundTrip(req *http.Request) (*http.Response, error) {
	c.l.inflight.Add(1)
	defer c.l.inflight.Add(-1)
	if c.l.closed.Load() {
		return nil, errClosed
	}
	c.l.counters.RoundTrips.Add(1)
	return c.rt.RoundTrip(req)
}

// leasesGetter hands the elector's LeaseLock a Lease client that notes
// what the acquisition does: its polls (Gets) and the token of a write it
// won.
type leasesGetter struct {
	coordclient.LeasesGetter
	l  *Locker
	at *attempt
}

func (g *leasesGetter) Leases(namespace string) coordclient.LeaseInterface {
	return &leases{LeaseInterface: g.LeasesGetter.Leases(namespace), l: g.l, at: g.at}
}

type leases struct {
	coordclient.LeaseInterface
	l  *Locker
	at *attempt
}

func (s *leases) Get(ctx context.Context, name string, opts metav1.GetOptions) (*coordinationv1.Lease, error) {
	acquiring := s.l.acquiring.Load()
	if acquiring {
		s.l.polls.Add(1)
		s.l.blocked.Store(false)
	}
	out, err := s.LeaseInterface.Get(ctx, name, opts)
	if acquiring && err == nil {
		s.l.blocked.Store(heldByOther(out, s.at.id, time.Now()))
	}
	return out, err
}

// heldByOther is client-go's test for waiting: the Lease names a holder
// other than id whose lease has not run out.
func heldByOther(l *coordinationv1.Lease, id string, now time.Time) bool {
	h := l.Spec.HolderIdentity
	if h == nil || *h == "" || *h == id {
		return false
	}
	if l.Spec.RenewTime == nil || l.Spec.LeaseDurationSeconds == nil {
		return true
	}
	return l.Spec.RenewTime.Add(time.Duration(*l.Spec.LeaseDurationSeconds) * time.Second).After(now)
}

// Create and Update are not cut short when the elector's context ends: a
// write abandoned on the wire may still land, and would leave the Lease
// naming a holder nobody leads as (client-go's own behaviour when a
// controller's context ends mid-write, costing the others a whole
// LeaseDuration). Finished, its answer tells the elector it won, and
// ReleaseOnCancel gives the Lease back. RenewDeadline bounds them instead.
func (s *leases) Create(ctx context.Context, lease *coordinationv1.Lease, opts metav1.CreateOptions) (*coordinationv1.Lease, error) {
	ctx, cancel := s.write(ctx)
	defer cancel()
	out, err := s.LeaseInterface.Create(ctx, lease, opts)
	s.won(out, err)
	return out, err
}

func (s *leases) Update(ctx context.Context, lease *coordinationv1.Lease, opts metav1.UpdateOptions) (*coordinationv1.Lease, error) {
	renewal := s.at.leading.Load() && !s.at.releasing.Load() && !impl.IsWarmingUp(ctx)
	start := time.Now()
	ctx, cancel := s.write(ctx)
	defer cancel()
	out, err := s.LeaseInterface.Update(ctx, lease, opts)
	if renewal {
		s.l.renew.add(time.Since(start), s.l.cfg.Duration(RetryPeriod), err)
	}
	s.won(out, err)
	return out, err
}

func (s *leases) write(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), s.l.cfg.Duration(RenewDeadline))
}

// won keeps the token of a write that made this candidate the holder,
// and notes a write of an empty holder (its release) that landed.
func (s *leases) won(out *coordinationv1.Lease, err error) {
	if err != nil || out == nil {
		return
	}
	holder := ""
	if out.Spec.HolderIdentity != nil {
		holder = *out.Spec.HolderIdentity
	}
	switch holder {
	case "":
		s.at.released.Store(true)
	case s.at.id:
		var t int32
		if out.Spec.LeaseTransitions != nil {
			t = *out.Spec.LeaseTransitions
		}
		s.at.token.Store(uint64(t) + 1)
	}
}

// cellLeases lists the Leases a cell's clients created.
func cellLeases(ctx context.Context, s impl.Servers, namespace string, opts map[string]string) (coordclient.LeasesGetter, []coordinationv1.Lease, error) {
	addrs := s[Need.Role]
	if len(addrs) == 0 {
		return nil, nil, nil
	}
	cfg := impl.Config{Servers: s, Namespace: namespace, Options: opts, Client: -1}
	l, err := New(ctx, cfg)
	if err != nil {
		return nil, nil, err
	}
	c := l.(*Locker).leases
	// Every namespace: --k8s-namespace is the cell's, not known here.
	list, err := c.Leases(metav1.NamespaceAll).List(ctx, metav1.ListOptions{LabelSelector: cellLabel + "=" + cellOf(namespace)})
	if err != nil {
		return nil, nil, fmt.Errorf("k8s-lease %s: list leases: %w", addrs[0], err)
	}
	return c, list.Items, nil
}

// Residue counts the cell's Leases that name a holder (a released Lease
// names none).
func Residue(ctx context.Context, s impl.Servers, namespace string) (int, error) {
	_, items, err := cellLeases(ctx, s, namespace, nil)
	n := 0
	for _, it := range items {
		if it.Spec.HolderIdentity != nil && *it.Spec.HolderIdentity != "" {
			n++
		}
	}
	return n, err
}

// Cleanup deletes the cell's Leases.
func Cleanup(ctx context.Context, s impl.Servers, namespace string) error {
	if namespace == "" {
		return nil
	}
	c, items, err := cellLeases(ctx, s, namespace, nil)
	if err != nil {
		return err
	}
	for _, it := range items {
		if err := c.Leases(it.Namespace).Delete(ctx, it.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("k8s-lease: delete lease %s: %w", it.Name, err)
		}
	}
	return nil
}
