// Package linear checks a cell's recorded history of lock operations for
// linearizability, as Jepsen checks locks: every acquire, try, release
// and renewal, with its call and return times and its outcome, must be
// explained by some order of the operations, each taking effect at one
// instant within its call, against a sequential mutex that hands out
// growing fencing tokens. The checker is porcupine, the one etcd's
// robustness tests use; its nondeterministic model lets an operation of
// unknown outcome (a timeout) have taken effect or not.
//
// A lease that ends without its holder (a TTL, a session) may be taken
// by another client while its holder still believes it holds it; the
// holder learns so at release ("lost"). The model lets such a grant end
// at any instant, and the check counts it as a lease expiry, not as a
// violation.
package linear
