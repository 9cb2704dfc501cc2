package redis

import (
	"crypto/rand"
	"encoding/hex"
	"time"
)

// Redisson is the Redisson release whose lock scripts redis-pubsub and
// redis-fair follow, script for script.
const Redisson = "Redisson 4.5.0"

// UnlockLatchTTL is how long Redisson keeps an unlock latch: its default
// (timeout 3 s + retry interval 1.5 s) × 3 retry attempts, the bound on
// the unlock command's own retries.
const UnlockLatchTTL = 13500 * time.Millisecond

// UnlockLatch is the key of one release's unlock latch, as Redisson names
// it: redisson_unlock_latch:{<lock key>}:<request id>, a fresh id per
// release. The release script reads it first (a retried command finds the
// first one's answer there) and sets it; the client deletes it after.
func UnlockLatch(key string) string {
	var b [16]byte
	rand.Read(b[:])
	return "redisson_unlock_latch:{" + key + "}:" + hex.EncodeToString(b[:])
}
