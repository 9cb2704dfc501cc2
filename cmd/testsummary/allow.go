package main

import (
	"regexp"
	"strings"
)

// allowed are the skips a CI run may have (the CI guide, docs/ci.md, lists
// them with the same words): with CI set, any other skip fails the run, so
// that a test that stopped running cannot pass for one that ran. Each
// says why the test cannot run in CI: what it needs is not CI's, or the
// check does not apply to what the row declares.
var allowed = []struct {
	test   *regexp.Regexp // matched against "package test"
	reason string         // a part of the skip's reason
	why    string
}{
	{regexp.MustCompile(`.`), "set LOCKBENCH_MEASURE=1 to measure",
		"a measurement of minutes, run by the scripts the guides name"},
	{regexp.MustCompile(`/impl/`), "declares no fencing tokens",
		"the conformance check of fencing does not apply to a row without tokens"},
	{regexp.MustCompile(`/impl/`), "leases never expire by themselves",
		"a lock of the connection's has no lease to expire; its crash tests free it"},
	{regexp.MustCompile(`/impl/inproc `), "declares no Residue",
		"the in-process lock has no server to count what a cancelled waiter left; its lock is shown free"},
	{regexp.MustCompile(`/impl/etcdmutex TestLibraryConformance/(cancelled-acquire|abandoned-grant|expired-release)$`), "the library's",
		"etcd's concurrency.Mutex as users call it: the row keeps the library's behaviour, and the reason names it"},
	{regexp.MustCompile(`/impl/etcdmutex TestLockRPCConformance/(cancelled-acquire|abandoned-grant)$`), "the server's concurrency.Mutex",
		"etcd's Lock RPC runs the same concurrency.Mutex in the server: a cancelled call can leave its key queued under the client's lease"},
}

// allowedSkip says whether a skip of test (package + " " + name) giving
// reason is on the list.
func allowedSkip(test, reason string) bool {
	for _, a := range allowed {
		if a.test.MatchString(test) && strings.Contains(reason, a.reason) {
			return true
		}
	}
	return false
}
