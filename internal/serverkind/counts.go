package serverkind

// Counts is what a cell's servers counted themselves, typed: the figures
// lockbench reads from them, whatever their kind calls its counters (a
// cell keeps them as result.ServerCounts). Each server kind says, once,
// what its counters mean (sandbox.Kind.Counts); nothing else reads a
// counter by its name.
//
// Every field but ClientNotifications sums the servers' own cumulative
// counters, so the counts of a span are the counts at its end less those
// at its start (Sub), and two spans' add (Add).
type Counts struct {
	// Messages is what the servers handled, in Unit: ZooKeeper's packets
	// in and out, etcd's gRPC messages, a Redis's commands (with the
	// pushes to subscribers, see Pushes), a Redis Cluster's bus messages
	// but its heartbeats, NATS's messages, a Kubernetes apiserver's
	// requests on Leases. Unit is empty when the kind counts none.
	Messages int64  `json:"messages,omitempty"`
	Unit     string `json:"unit,omitempty"`
	// Pushes says that Unit counts the messages the servers pushed to
	// subscribers, which they do not count themselves (Redis): the
	// clients' notifications stand for them (Handled).
	Pushes bool `json:"pushes,omitempty"`
	// Watches is how many watches the servers fired to their clients
	// (ZooKeeper's watch_count triggers, etcd's watch events); nil when
	// the kind counts none.
	Watches *int64 `json:"watches,omitempty"`
	// Forks is how many times a server forked for a snapshot (Redis's
	// save rules): a pause its clients felt.
	Forks int64 `json:"forks,omitempty"`
	// ClientNotifications is the clients' own count of notifications
	// received over the same span as the servers' counts, from before the
	// first client acted to after the last session closed, so that the
	// two compare like with like.
	ClientNotifications int64 `json:"client_notifications"`
}

// Handled is the messages the servers handled in Unit, with the pushes
// the clients received when the unit counts them; false when the kind
// counts none.
func (s *Counts) Handled() (int64, string, bool) {
	if s == nil || s.Unit == "" {
		return 0, "", false
	}
	if s.Pushes {
		return s.Messages + s.ClientNotifications, s.Unit, true
	}
	return s.Messages, s.Unit, true
}

// Sub is the counts of the span from o to s, both cumulative readings of
// the same servers.
func (s Counts) Sub(o Counts) Counts {
	s.Messages -= o.Messages
	if s.Watches != nil && o.Watches != nil {
		w := *s.Watches - *o.Watches
		s.Watches = &w
	}
	s.Forks -= o.Forks
	s.ClientNotifications -= o.ClientNotifications
	return s
}

// Span is the widest span of two readings of the same servers'
// cumulative counts (two shards' of one cell): each figure's earliest
// (least) before, when before, else its latest (greatest) after.
func (s Counts) Span(o Counts, before bool) Counts {
	pick := func(a, b int64) int64 {
		if before {
			return min(a, b)
		}
		return max(a, b)
	}
	s.Messages = pick(s.Messages, o.Messages)
	if s.Watches != nil && o.Watches != nil {
		w := pick(*s.Watches, *o.Watches)
		s.Watches = &w
	}
	s.Forks = pick(s.Forks, o.Forks)
	return s
}

// Add is s and o's counts together: what one kind counted beside
// another's, or two spans'. A unit the two do not share is joined.
func (s Counts) Add(o Counts) Counts {
	switch {
	case s.Unit == "":
		s.Unit = o.Unit
	case o.Unit != "" && o.Unit != s.Unit:
		s.Unit += " + " + o.Unit
	}
	s.Messages += o.Messages
	s.Pushes = s.Pushes || o.Pushes
	if o.Watches != nil {
		w := *o.Watches
		if s.Watches != nil {
			w += *s.Watches
		}
		s.Watches = &w
	}
	s.Forks += o.Forks
	s.ClientNotifications += o.ClientNotifications
	return s
}

// Fired is the watches the servers fired; false without counts, or when
// their kind counts none.
func (s *Counts) Fired() (int64, bool) {
	if s == nil || s.Watches == nil {
		return 0, false
	}
	return *s.Watches, true
}

// Received is the clients' notifications over the servers' span; 0
// without counts.
func (s *Counts) Received() int64 {
	if s == nil {
		return 0
	}
	return s.ClientNotifications
}
