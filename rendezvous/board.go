package rendezvous

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/lockbench/lockbench/impl"
)

// Board is a small key-value store on a server the run already uses,
// through which shards meet. Keys are paths of words separated by '/'.
// Methods are safe for concurrent use.
type Board interface {
	// Put sets key to value. A passing key goes away when this shard's
	// connection does (or soon after), so a crashed shard does not seem
	// present to a later run.
	Put(ctx context.Context, key, value string, passing bool) error
	// Get returns key's value; ok is false when there is none.
	Get(ctx context.Context, key string) (value string, ok bool, err error)
	// Clock reads the server's clock once; res is its resolution.
	Clock(ctx context.Context) (t time.Time, res time.Duration, err error)
	Close() error
	// Kind is the server's kind; String names the server, e.g. "redis
	// 127.0.0.1:6379".
	Kind() string
	String() string
}

// opener connects a board to addrs of one server kind; run names this run.
type opener func(ctx context.Context, addrs []string, run string) (Board, error)

// boards are the server kinds a board can live on, best first: a board's
// traffic lands on its server's counters, so a key-value server that most
// cells do not measure is preferred.
var boards []struct {
	kind string
	open opener
}

func registerBoard(kind string, open opener) {
	boards = append(boards, struct {
		kind string
		open opener
	}{kind, open})
}

// OpenBoards opens a board on one server of every kind that can hold one
// among the servers given (roles: every role there is), best first, so
// that each cell can meet on a server it does not measure.
func OpenBoards(ctx context.Context, roles []impl.Need, servers impl.Servers, run string) ([]Board, error) {
	var kinds []string
	var out []Board
	for _, b := range boards {
		kinds = append(kinds, b.kind)
		i := slices.IndexFunc(roles, func(n impl.Need) bool { return n.Kind == b.kind && len(servers[n.Role]) > 0 })
		if i < 0 {
			continue
		}
		addrs := servers[roles[i].Role]
		if roles[i].Count > 1 {
			addrs = addrs[:1] // independent servers: the first will do
		}
		x, err := b.open(ctx, addrs, run)
		if err != nil {
			for _, o := range out {
				o.Close()
			}
			return nil, err
		}
		out = append(out, x)
	}
	if len(out) == 0 {
		slices.Sort(kinds)
		return nil, fmt.Errorf("shard: no server to meet on: a sharded run needs a server of kind %v among its addresses", kinds)
	}
	return out, nil
}
