package pgadvisory_test

import (
	"sync"
	"testing"

	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/impl/impltest"
	_ "github.com/lockbench/lockbench/impl/pgadvisory"
	"github.com/lockbench/lockbench/sandboxtest"
)

// The three rows run side by side: most of their time is pgx's pause of
// 100 ms after each cancel request (CancelRequestContextWatcherHandler),
// which the suite's deadline checks meet a few hundred times per row, and
// each row's subtests use namespaces of their own (advisory keys no other
// row's Residue counts). Their subtests run from goroutines of their own
// rather than as parallel subtests, whose number go test caps at
// -parallel (the number of cores, 2 here) though these mostly wait.
func TestConformance(t *testing.T) {
	d, _ := impl.Lookup("pg-advisory")
	servers := sandboxtest.Start(t, d.Needs...)
	var wg sync.WaitGroup
	for _, name := range []string{"pg-advisory", "pg-try", "pg-xact"} {
		wg.Go(func() {
			t.Run(name, func(t *testing.T) {
				d, ok := impl.Lookup(name)
				if !ok {
					t.Fatalf("%s is not registered", name)
				}
				impltest.Run(t, d, servers, impltest.Options{})
			})
		})
	}
	wg.Wait()
}

// The guarded register on PostgreSQL keeps the rules every server kind's
// must, for the three rows that share it.
func TestGuard(t *testing.T) {
	d, _ := impl.Lookup("pg-advisory")
	servers := sandboxtest.Start(t, d.Needs...)
	impltest.Register(t, d.Needs[0].Guard, servers[d.Needs[0].Role])
}
