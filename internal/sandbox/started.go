package sandbox

// Started returns the server this process started on addr, while it runs.
// A fault can freeze or kill a server lockbench started, never one it was
// only given the address of.
func Started(addr string) (*Server, bool) {
	v, ok := running.Load(addr)
	if !ok {
		return nil, false
	}
	s := v.(*Server)
	if !s.Running() {
		return nil, false
	}
	return s, true
}
