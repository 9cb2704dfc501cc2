package sandbox

// TB is what Need asks of a test: testing.TB's part it uses, so that the
// sandbox imports no testing package.
type TB interface {
	Helper()
	Skip(args ...any)
	Fatalf(format string, args ...any)
}

// Need ends a test unless every kind named is installed: a skip, or with
// CI set a failure (MissingFails). The kinds' own tests use it, which
// cannot import sandboxtest (it registers them all).
func Need(t TB, kinds ...string) {
	t.Helper()
	for _, k := range kinds {
		if err := Installed(k); err != nil {
			if MissingFails() {
				t.Fatalf("%v (CI is set: a missing server fails the test)", err)
			}
			t.Skip(err)
		}
	}
}
