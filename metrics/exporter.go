package metrics

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// DefaultLinger bounds how long Close waits for a scrape that saw the last
// cell's final figures: a run that ended between two scrapes would
// otherwise leave them unseen. Prometheus scrapes every 15s by default.
const DefaultLinger = 20 * time.Second

// Exporter serves a run's figures on /metrics. Its methods are safe for
// concurrent use: the plan calls them from its own goroutine, the cell's
// progress goroutine and its interval writer.
type Exporter struct {
	reg    *prometheus.Registry
	shard  string
	linger time.Duration
	srv    *http.Server
	ln     net.Listener
	served chan struct{}

	scrapes  atomic.Int64 // scrapes answered
	finalAt  atomic.Int64 // scrapes answered when the last result came in
	finished atomic.Bool  // a result came in

	mu    sync.Mutex
	runID string
	cells map[string]*cellState // by label values joined

	counters      map[string]*prometheus.CounterVec
	errorsByClass *prometheus.CounterVec
	holding       *prometheus.GaugeVec
	waiting       *prometheus.GaugeVec
	running       *prometheus.GaugeVec
	cpuShare      *prometheus.GaugeVec
	lag           *prometheus.GaugeVec
	acquire       *latencyVec
	release       *latencyVec
}

// Option configures an Exporter.
type Option func(*Exporter)

// WithShard labels every series with shard (like "1/4"). The default is
// "0/1": a run not split over processes.
func WithShard(shard string) Option { return func(e *Exporter) { e.shard = shard } }

// WithLinger sets how long Close waits for a final scrape. The default is
// DefaultLinger; 0 does not wait.
func WithLinger(d time.Duration) Option { return func(e *Exporter) { e.linger = d } }

// New makes an exporter that serves nothing yet: Handler serves it, or
// Listen starts a server of its own.
func New(opts ...Option) *Exporter {
	e := &Exporter{reg: prometheus.NewRegistry(), shard: "0/1", linger: DefaultLinger,
		cells: map[string]*cellState{}}
	for _, o := range opts {
		o(e)
	}
	e.register()
	// The generator's own health: CPU time and the Go scheduler's latency
	// (how long runnable goroutines — the clients — waited for a core).
	own := prometheus.WrapRegistererWith(prometheus.Labels{"shard": e.shard}, e.reg)
	own.MustRegister(collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	own.MustRegister(collectors.NewGoCollector(collectors.WithGoCollectorRuntimeMetrics(collectors.MetricsScheduler)))
	return e
}

// Listen starts serving e's /metrics on addr (HOST:PORT; port 0 picks a
// free one, see Addr).
func Listen(addr string, opts ...Option) (*Exporter, error) {
	e := New(opts...)
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("lockbench: metrics endpoint: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", e.Handler())
	e.ln, e.served = ln, make(chan struct{})
	e.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		defer close(e.served)
		e.srv.Serve(ln)
	}()
	return e, nil
}

// Addr is the address Listen serves on.
func (e *Exporter) Addr() string {
	if e.ln == nil {
		return ""
	}
	return e.ln.Addr().String()
}

// Handler serves the exposition, in Prometheus's protobuf format when the
// scraper asks for it (native histograms need it) and in text otherwise.
func (e *Exporter) Handler() http.Handler {
	h := promhttp.HandlerFor(e.reg, promhttp.HandlerOpts{Registry: e.reg})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(w, r)
		e.scrapes.Add(1)
	})
}

// Close waits, up to the linger time or ctx's end, for a scrape answered
// after the last cell's result, then stops the server.
func (e *Exporter) Close(ctx context.Context) error {
	if e.srv == nil {
		return nil
	}
	if e.finished.Load() && e.linger > 0 {
		wctx, cancel := context.WithTimeout(ctx, e.linger)
		defer cancel()
		t := time.NewTicker(50 * time.Millisecond)
		defer t.Stop()
		for e.scrapes.Load() <= e.finalAt.Load() && wctx.Err() == nil {
			select {
			case <-wctx.Done():
			case <-t.C:
			}
		}
	}
	err := e.srv.Close()
	<-e.served
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}
