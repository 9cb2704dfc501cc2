// Package redsync runs github.com/go-redsync/redsync/v4, a widely used Go
// Redlock library, over the same masters as package redlock, so that the
// two can be compared cell by cell. Each simulated client builds its own
// redsync.Redsync over its own go-redis clients (made by redis.Dial, so
// every command is counted), with the cell's TTL, the same jittered retry
// delay and a drift factor of 0.01.
//
// The library is used as shipped. The adapter only watches it: it counts
// failed tries and their kind, notices when fewer than a majority of
// masters answered a try and then stops the library's retry loop (the
// same fail-fast rule as package redlock), and after a cancelled Acquire it
// deletes whatever the last try may have left.
package redsync
