package redlock

// MastersGranted is the most masters that said yes to one of this
// client's acquire attempts: for a client that made a single grant, how
// many masters granted it. Fault scenarios read it (by type assertion on
// impl.Locker) to show a grant that rests on a bare majority. Like Stats,
// it is read once the client's last Acquire has returned.
func (l *Locker) MastersGranted() int {
	g := l.stats.MastersGranted
	for k := len(g) - 1; k >= 0; k-- {
		if g[k].Load() > 0 {
			return k
		}
	}
	return 0
}
