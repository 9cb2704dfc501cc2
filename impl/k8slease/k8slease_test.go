package k8slease_test

import (
	"context"
	"errors"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/impl/impltest"
	"github.com/lockbench/lockbench/impl/k8slease"
	"github.com/lockbench/lockbench/internal/sandbox"
	"github.com/lockbench/lockbench/internal/serverkind"
	"github.com/lockbench/lockbench/sandboxtest"
)

// short are the timings of these tests, the driver's Short: client-go's
// defaults (15 s, 10 s, 2 s) would make each hand-off seconds long; the
// mechanism is the same at any scale. No client-side rate limit, so that
// the polls are the timings' alone.
var short = func() map[string]string {
	d, _ := impl.Lookup("k8s-lease")
	return d.Short
}()

func TestConformance(t *testing.T) {
	d, ok := impl.Lookup("k8s-lease")
	if !ok {
		t.Fatal("driver k8s-lease not registered")
	}
	impltest.Run(t, d, sandboxtest.Start(t, d.Needs...), impltest.Options{
		Configure: func(cfg *impl.Config) { cfg.Options = short },
	})
}

func connect(t *testing.T, servers impl.Servers, ns string, client int) *k8slease.Locker {
	t.Helper()
	l, err := k8slease.New(context.Background(), impl.Config{Servers: servers, Namespace: ns, Client: client, Options: short})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l.(*k8slease.Locker)
}

// waitSettled waits until l polls between attempts.
func waitSettled(t *testing.T, l *k8slease.Locker) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !l.Settled(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the waiter never settled into polling")
		}
	}
}

// A leader that crashes (its client gone without a release) keeps the
// Lease until a candidate has seen it unrenewed for a whole
// LeaseDuration: the takeover comes no sooner than LeaseDuration after
// the crash, less the one renewal period the leader may have been into.
// The new grant's token is higher, the waiter counted its polls as
// retries, and nothing is held once it releases.
func TestCrashedLeaderIsTakenOverAfterLeaseDuration(t *testing.T) {
	servers := sandboxtest.Start(t, k8slease.Need)
	ns := t.Name()
	a, b := connect(t, servers, ns, 1), connect(t, servers, ns, 2)
	ctx := context.Background()
	held, err := a.Acquire(ctx, "leader")
	if err != nil {
		t.Fatal(err)
	}
	first, ok := held.Fence()
	if !ok {
		t.Fatal("a grant has no token")
	}
	got := make(chan impl.Lease, 1)
	go func() {
		actx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		lease, err := b.Acquire(actx, "leader")
		if err != nil {
			t.Error(err)
		}
		got <- lease
	}()
	waitSettled(t, b)
	crash := time.Now()
	a.Close()
	next := <-got
	if next == nil {
		t.FailNow()
	}
	took := time.Since(crash)
	ld, rp := 2*time.Second, 50*time.Millisecond
	if took < ld-2*rp {
		t.Errorf("a crashed leader's Lease was taken over %v after the crash, before LeaseDuration %v", took, ld)
	}
	t.Logf("takeover after %v (LeaseDuration %v)", took, ld)
	if tok, ok := next.Fence(); !ok || tok <= first {
		t.Errorf("the takeover's token %d (ok %v) is not above the crashed leader's %d", tok, ok, first)
	}
	if r := b.Counters().Retries.Load(); r < int64(ld/(3*rp)) {
		t.Errorf("the waiter counted %d retries over a %v wait polling every %v–%v", r, took, rp, rp*22/10)
	}
	if err := next.Release(ctx); err != nil {
		t.Fatal(err)
	}
	d, _ := impl.Lookup("k8s-lease")
	if n, err := d.Residue(ctx, servers, ns); err != nil || n != 0 {
		t.Errorf("after the release, %d Leases still name a holder (%v)", n, err)
	}
}

// What the clients count as requests is what the apiserver counts for
// Leases, plus at most the apiserver's own identity-lease renewals (one
// GET and one PUT every 10 s), and every poll of a waiting candidate is a
// GET the apiserver saw.
func TestRequestsAreTheApiserversOwn(t *testing.T) {
	servers := sandboxtest.Start(t, k8slease.Need)
	kind, _ := sandbox.LookupKind(serverkind.KubeAPIServer)
	addrs := servers[k8slease.Need.Role]
	ctx := context.Background()
	ns := t.Name()
	ls := []*k8slease.Locker{connect(t, servers, ns, 1), connect(t, servers, ns, 2), connect(t, servers, ns, 3)}
	before, err := kind.Stats(ctx, addrs)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	done := make(chan error, len(ls))
	for _, l := range ls {
		go func() {
			for range 3 {
				lease, err := l.Acquire(ctx, "counted")
				if err != nil {
					done <- err
					return
				}
				time.Sleep(20 * time.Millisecond) // the hold
				if err := lease.Release(ctx); err != nil {
					done <- err
					return
				}
			}
			done <- nil
		}()
	}
	for range ls {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	after, err := kind.Stats(ctx, addrs)
	if err != nil {
		t.Fatal(err)
	}
	span := time.Since(start)
	var clients, retries int64
	for _, l := range ls {
		clients += l.Counters().RoundTrips.Load()
		retries += l.Counters().Retries.Load()
	}
	server := after["apiserver_lease_requests"] - before["apiserver_lease_requests"]
	background := 2 * (int64(span/(10*time.Second)) + 1)
	if server < clients || server > clients+background {
		t.Errorf("the apiserver counted %d Lease requests, the clients %d (+ at most %d of its own over %v)", server, clients, background, span)
	}
	gets := after["apiserver_lease_get"] - before["apiserver_lease_get"]
	if gets < retries {
		t.Errorf("the clients counted %d polls that did not win, the apiserver %d GETs in all", retries, gets)
	}
	if w := after["etcd_lease_writes"] - before["etcd_lease_writes"]; w < 9 {
		t.Errorf("9 grants and releases wrote %d Leases to etcd", w)
	}
	t.Logf("%d requests, %d polls that did not win, %d conflicts, in %v", clients, retries,
		after["apiserver_lease_conflicts"]-before["apiserver_lease_conflicts"], span)
}

// Settings client-go refuses, or that a Lease cannot keep, are refused
// before any server is asked; lock names become valid Lease names that
// stay apart.
func TestValidateAndNames(t *testing.T) {
	bad := []map[string]string{
		{k8slease.LeaseDuration.Name: "1500ms"},
		{k8slease.LeaseDuration.Name: "10s", k8slease.RenewDeadline.Name: "10s"},
		{k8slease.RenewDeadline.Name: "2s", k8slease.RetryPeriod.Name: "2s"},
	}
	for _, opts := range bad {
		err := k8slease.Validate(impl.Config{Options: opts})
		if err == nil {
			t.Errorf("%v accepted", opts)
		}
		if _, err := k8slease.New(context.Background(), impl.Config{Options: opts, Servers: impl.Servers{"kube": {"127.0.0.1:1"}}}); err == nil || errors.Is(err, impl.ErrUnreachable) {
			t.Errorf("New with %v: %v, want the settings refused before dialling", opts, err)
		}
	}
	if err := k8slease.Validate(impl.Config{}); err != nil {
		t.Errorf("the defaults refused: %v", err)
	}
	subdomain := regexp.MustCompile(`^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$`)
	seen := map[string]string{}
	for _, name := range []string{"l", "L", "a/b", "a_b", "a-b", strings.Repeat("x", 400), "Ünï"} {
		got := k8slease.LeaseName("cell", name)
		if !subdomain.MatchString(got) || len(got) > 253 {
			t.Errorf("LeaseName(%q) = %q, not a DNS subdomain", name, got)
		}
		if other, dup := seen[got]; dup {
			t.Errorf("locks %q and %q share the Lease %q", other, name, got)
		}
		seen[got] = name
	}
	if k8slease.LeaseName("a", "l") == k8slease.LeaseName("b", "l") {
		t.Error("two cells share a Lease")
	}
}

// An apiserver that is not there is unreachable, one line.
func TestUnreachable(t *testing.T) {
	_, err := k8slease.New(context.Background(), impl.Config{Options: short, DialTimeout: time.Second,
		Servers: impl.Servers{"kube": {"127.0.0.1:1"}}})
	if !errors.Is(err, impl.ErrUnreachable) {
		t.Errorf("New against a closed port: %v, want ErrUnreachable", err)
	}
}
