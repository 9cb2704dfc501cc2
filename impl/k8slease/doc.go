// Package k8slease runs client-go's leader election on a Lease
// (k8s.io/client-go/tools/leaderelection with resourcelock.LeaseLock), the
// lock every Kubernetes controller and operator elects its leader with,
// as its docs show: one LeaderElector per acquisition, over one client
// (one connection) per simulated client, with component-base's defaults —
// LeaseDuration 15 s, RenewDeadline 10 s, RetryPeriod 2 s — unless the
// --k8s-* options say otherwise, and ReleaseOnCancel.
//
// Candidates poll. Each tries at once, then every RetryPeriod with jitter
// (×1 to ×2.2): a Get of the Lease and, when the Lease is free (an empty
// holder, which a release writes) or has not changed for a whole
// LeaseDuration since the candidate first saw it, an Update carrying the
// fetched resourceVersion — of several candidates that try at once one
// wins, the others are refused 409 Conflict. A leader renews with an
// Update every RetryPeriod and gives up leadership when it cannot for
// RenewDeadline. So a release is noticed at the next poll of whichever
// candidate polls first, and a crashed leader is taken over a whole
// LeaseDuration after its last renewal, as seen by a candidate that had
// been watching it that long.
//
// There is no notification and no wake-up: what a waiter costs is its
// polls, apiserver requests and etcd writes per candidate per second,
// which the apiserver's own counters give (the sandbox kind
// kube-apiserver reads apiserver_request_total for Leases, by verb and
// code). The fencing token is the Lease's spec.leaseTransitions plus one:
// every grant to a new holder raises it (client-go's own docs say the
// election offers no fencing; the number is there for a resource to check).
//
// Counters: RoundTrips is every HTTP request the client sent (polls,
// Updates, a release's Get and Update, renewals); Retries the polls of an
// acquisition that did not win; Lost the grants whose elector had given up
// leadership before Release.
//
// Addresses are an apiserver's host:port (HTTPS; the serving certificate
// is not verified, as for a throwaway cluster); the bearer token is
// $LOCKBENCH_KUBE_TOKEN, or the sandbox's. Leases live in the Kubernetes
// namespace --k8s-namespace (default "default").
package k8slease
