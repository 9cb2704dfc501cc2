package result

// Faults is what a fault scenario (crash, pause, failover, restart,
// latency, partition, freeze) measured over its repeats: the figures
// every scenario keeps, and those of the scenario as it was staged in a
// struct of their own (exactly one of Crash … Freeze is set). The faults
// package fills it; readers only read.
type Faults struct {
	Repeats int `json:"repeats"`
	// ConfiguredMs is the bound recovery is compared with: the TTL for the
	// Redis locks, the session timeout for ZooKeeper, the stall for a
	// lock of the connection's (pause) and the freeze (freeze); Bound
	// says which lease bound it is, when it is one.
	ConfiguredMs float64 `json:"configured_ms,omitempty"`
	Bound        Bound   `json:"bound,omitempty"`
	// BoundSetting is the driver's own name for that bound, where it
	// declares one of its own (rueidislock's KeyValidity): the setting a
	// user changes to move it.
	BoundSetting string `json:"bound_setting,omitempty"`
	// RecoveryMs is the time from the fault until the next client held the
	// lock, over repeats.
	RecoveryMs *Spread `json:"recovery_ms,omitempty"`
	// Stale writes by a holder that no longer held the lock (pause): with
	// fencing the resource rejects them, without it accepts them.
	StaleWritesAccepted int64 `json:"stale_writes_accepted"`
	StaleWritesRejected int64 `json:"stale_writes_rejected"`
	// OwnServers says the scenario staged its failure on servers it
	// started itself (it had to kill or restart them), whatever servers
	// the run was given.
	OwnServers bool `json:"own_servers,omitempty"`

	Crash             *CrashFigures             `json:"crash,omitempty"`
	ConnCrash         *ConnCrashFigures         `json:"conn_crash,omitempty"`
	Pause             *PauseFigures             `json:"pause,omitempty"`
	ConnPause         *ConnPauseFigures         `json:"conn_pause,omitempty"`
	Failover          *FailoverFigures          `json:"failover,omitempty"`
	Restart           *RestartFigures           `json:"restart,omitempty"`
	ConnRestart       *ConnRestartFigures       `json:"conn_restart,omitempty"`
	Latency           *LatencyFigures           `json:"latency,omitempty"`
	Partition         *PartitionFigures         `json:"partition,omitempty"`
	EnsemblePartition *EnsemblePartitionFigures `json:"ensemble_partition,omitempty"`
	Freeze            *FreezeFigures            `json:"freeze,omitempty"`
	DeadWaiters       *DeadWaiterFigures        `json:"dead_waiters,omitempty"`
	Pauses            *PausesFigures            `json:"pauses,omitempty"`
	ClockJump         *ClockJumpFigures         `json:"clock_jump,omitempty"`

	// Details are the per-scenario figures of results written before
	// schema 3, by name ("masters_cut_majority": 3).
	//
	// Deprecated: only read from results written before schema 3, whose
	// figures ReadSummary also sets in the typed fields above; new runs
	// do not fill it. It goes in the release after the next.
	Details map[string]float64 `json:"details,omitempty"`
}

// Bound names what ends a lease without its holder: what a fault's
// recovery is compared with.
type Bound string

// The lease bounds.
const (
	BoundTTL     Bound = "ttl"
	BoundSession Bound = "session_timeout"
	// BoundConn: the lease ends with the holder's connection; a silent
	// peer's only when the server's TCP keepalive gives up on it.
	BoundConn Bound = "connection"
)

// CrashFigures are crash's on a lease that ends by itself (a TTL, a
// session): the holder is cut off after its grant and waiters queue.
type CrashFigures struct {
	// Waiters is how many clients queued behind the holder each repeat.
	Waiters int `json:"waiters"`
	// Unrecovered counts repeats in which no waiter got the lock within
	// the scenario's wait (several bounds).
	Unrecovered int64 `json:"unrecovered,omitempty"`
}

// ConnCrashFigures are crash's on a lock of the connection's
// (impl.LeaseConn): each repeat ends a holder's connection twice, once
// reset (RST), once silent (no FIN, no RST, the proxy's kernel answering
// for the holder). The cell's RecoveryMs is the reset's.
type ConnCrashFigures struct {
	Waiters int `json:"waiters"`
	// Reset and Silent are how each way of ending the connection went.
	Reset  ConnEnd `json:"reset"`
	Silent ConnEnd `json:"silent"`
	// SilentWaitMs is how long (ms) the scenario waited for a silent
	// holder's lock to be freed: twice the keepalive's bound, within
	// [5 s, 10 s].
	SilentWaitMs float64 `json:"silent_wait_ms,omitempty"`
	// Keepalive is the TCP keepalive the server kept on the silent
	// holder's connection; nil when no silent crash got that far.
	Keepalive *Keepalive `json:"keepalive,omitempty"`
}

// ConnEnd is how one way of ending a holder's connection went over the
// repeats.
type ConnEnd struct {
	// Recovered counts repeats in which a waiter got the lock; Unfreed
	// those in which none did within the wait (a finding, not an error).
	Recovered int64 `json:"recovered"`
	Unfreed   int64 `json:"unfreed"`
	// RecoveryMs is the time (ms) from the connection's end until a
	// waiter held the lock, over the repeats that recovered.
	RecoveryMs *Spread `json:"recovery_ms,omitempty"`
}

// Keepalive is the TCP keepalive a server keeps on a connection.
type Keepalive struct {
	// Reported says the driver could tell; without it the rest is zero.
	Reported bool `json:"reported"`
	// IdleS is the idle time before the first probe, IntervalS the time
	// between probes (seconds), Count the probes unanswered before the
	// server gives up; IdleS 0: the server could not say.
	IdleS     float64 `json:"idle_s"`
	IntervalS float64 `json:"interval_s"`
	Count     int     `json:"count"`
	// Source says where the settings come from, when not from the
	// session ("this host's default, net.ipv4.tcp_keepalive_*").
	Source string `json:"source,omitempty"`
}

// PauseFigures are pause's on a lease that ends by itself: the holder
// stalls past it, another client is granted the lock, and the stalled
// holder writes late to a fenced and an unfenced resource.
type PauseFigures struct {
	// StaleWrites counts the repeats in which the late write came after
	// another client's grant; UnfencedAccepted those in which the
	// resource without fencing took it. The fenced resource's answers are
	// Faults.StaleWritesAccepted and StaleWritesRejected.
	StaleWrites      int64 `json:"stale_writes"`
	UnfencedAccepted int64 `json:"unfenced_accepted"`
	// LockFences says the lock hands out fencing tokens of its own, so
	// that its users write with them; without, the tokens came from a
	// counter its servers keep, to show what fencing would do.
	LockFences bool `json:"lock_fences"`
}

// ConnPauseFigures are pause's on a lock of the connection's: the holder
// stalls holding it, and the waiters stall as long. The cell's RecoveryMs
// is the time from the stall's start to the next grant.
type ConnPauseFigures struct {
	// PauseMs is the stall asked for (--pause-for), PausedMsMax the
	// longest one measured (ms).
	PauseMs     float64 `json:"pause_ms"`
	PausedMsMax float64 `json:"paused_ms_max"`
	// GrantedDuringPause counts repeats in which a waiter was granted
	// the lock while the holder stalled; HolderLost those in which the
	// holder's release then found the lock lost; Unrecovered those in
	// which no waiter got it at all.
	GrantedDuringPause int64 `json:"granted_during_pause,omitempty"`
	HolderLost         int64 `json:"holder_lost,omitempty"`
	Unrecovered        int64 `json:"unrecovered,omitempty"`
}

// Failover is how a failover was staged, by the layout of the lock's
// servers.
type Failover string

// The failovers lockbench stages.
const (
	// FailoverReplica: the master was killed after the grant and its
	// asynchronous replica, cut off before it, promoted without the key.
	FailoverReplica Failover = "replica_promoted"
	// FailoverMaster: one of the quorum's masters was killed.
	FailoverMaster Failover = "master_killed"
	// FailoverFollower: the ensemble member holding the client's session
	// (a follower) was killed.
	FailoverFollower Failover = "follower_killed"
)

// FailoverFigures are failover's: the server that granted the lock is
// lost while it is held, and a second client asks for it. Failovers run
// on servers of the scenario's own (Faults.OwnServers).
type FailoverFigures struct {
	Staged Failover `json:"staged"`
	// HoldWindowMs is how long (ms) the first holder held on after the
	// failure.
	HoldWindowMs float64 `json:"hold_window_ms"`
	// OverlappingRepeats counts repeats in which the second client got
	// the lock while the first held it.
	OverlappingRepeats int64 `json:"overlapping_repeats"`
	// Promoted counts replicas promoted, MastersKilled masters killed.
	Promoted      int64 `json:"promoted,omitempty"`
	MastersKilled int64 `json:"masters_killed,omitempty"`
	// SessionMoved counts repeats in which the holder's session moved to
	// another member, SessionMoveMsMean how long that took on average
	// (ms), SessionLost sessions that expired instead.
	SessionMoved      int64   `json:"session_moved,omitempty"`
	SessionMoveMsMean float64 `json:"session_move_ms_mean,omitempty"`
	SessionLost       int64   `json:"session_lost,omitempty"`
	// HolderReleaseFailed counts first holders whose release failed on
	// the lost server: the script's doing, not an error.
	HolderReleaseFailed int64 `json:"holder_release_failed,omitempty"`
}

// RestartFigures are restart's on a quorum of masters: one that granted
// the lock restarts empty, and a second client asks. The cell's
// ConfiguredMs is the TTL.
type RestartFigures struct {
	// RestartDelayMs is how long (ms) the restarted master stayed out
	// (--redlock-restart-delay).
	RestartDelayMs float64 `json:"restart_delay_ms"`
	// FirstHolderMasters is how many masters granted the first holder's
	// lock (0: the client cannot say).
	FirstHolderMasters int `json:"first_holder_masters,omitempty"`
	// OverlappingRepeats counts repeats in which the second client got
	// the lock while the first still held it.
	OverlappingRepeats int64 `json:"overlapping_repeats"`
}

// ConnRestartFigures are restart's on a lock of the connection's: its
// server is killed and started again while a client holds the lock.
type ConnRestartFigures struct {
	// RestartMsMax is the longest time (ms) from the kill until the
	// server answered again.
	RestartMsMax float64 `json:"restart_ms_max"`
	// OverlappingRepeats counts repeats in which a second client got the
	// lock while the first still believed it held it.
	OverlappingRepeats int64 `json:"overlapping_repeats"`
	// The first holder's release afterwards: it succeeded, reported the
	// lock lost, or failed otherwise, in so many repeats.
	HolderReleaseOK     int64 `json:"holder_release_ok"`
	HolderReleaseLost   int64 `json:"holder_release_lost"`
	HolderReleaseFailed int64 `json:"holder_release_failed,omitempty"`
}

// LatencyFigures are latency's: every server behind a proxy adding a
// delay each way.
type LatencyFigures struct {
	// NetDelayMs is the delay each way, NetJitterMs the random ± added
	// to it (ms); Proxies how many servers sat behind one (0: the lock
	// has no server, and nothing was delayed).
	NetDelayMs  float64 `json:"net_delay_ms"`
	NetJitterMs float64 `json:"net_jitter_ms"`
	Proxies     int     `json:"proxies"`
}

// PartitionFigures are partition's on a quorum of masters: the clients
// loop with a minority of masters cut off for PhaseMs, then each asks
// once with a majority cut off.
type PartitionFigures struct {
	// Masters is how many masters the lock had; MastersCutMinority and
	// MastersCutMajority how many each phase cut off.
	Masters            int `json:"masters"`
	MastersCutMinority int `json:"masters_cut_minority"`
	MastersCutMajority int `json:"masters_cut_majority"`
	// PhaseMs is how long (ms) each repeat looped with the minority cut.
	PhaseMs float64 `json:"phase_ms"`
	// AcquiresMinorityCut and ErrorsMinorityCut are the loop's grants and
	// errors with the minority cut.
	AcquiresMinorityCut int64 `json:"acquires_minority_cut"`
	ErrorsMinorityCut   int64 `json:"errors_minority_cut"`
	// With the majority cut: attempts, of which granted, failed with
	// no_quorum, and hung until the bound (TTL + 5 s); FailMsMaxMajorityCut
	// is how long (ms) the slowest failure took.
	AttemptsMajorityCut  int64   `json:"attempts_majority_cut"`
	AcquiresMajorityCut  int64   `json:"acquires_majority_cut"`
	NoQuorumMajorityCut  int64   `json:"no_quorum_majority_cut"`
	HungMajorityCut      int64   `json:"hung_majority_cut"`
	FailMsMaxMajorityCut float64 `json:"fail_ms_majority_cut_max"`
}

// EnsemblePartitionFigures are partition's on an ensemble (ZooKeeper):
// the holder's member is cut off, its session should move. The cell's
// ConfiguredMs is the session timeout and its RecoveryMs the time until
// the session moved.
type EnsemblePartitionFigures struct {
	// OwnEnsemble says the run's ensemble had fewer than three members,
	// so the scenario started one of its own.
	OwnEnsemble bool `json:"own_ensemble,omitempty"`
	// ServersCut counts members cut off; SessionMoved repeats in which
	// the holder's session moved to another member; SessionLost sessions
	// that expired; AcquiresDuringCut grants while the member was cut.
	ServersCut        int64 `json:"servers_cut"`
	SessionMoved      int64 `json:"session_moved"`
	SessionLost       int64 `json:"session_lost"`
	AcquiresDuringCut int64 `json:"acquires_during_cut"`
}

// FreezeFigures are freeze's: one of the lock's servers stopped (SIGSTOP)
// while clients loop on one lock, then resumed. The cell's ConfiguredMs
// is the freeze and its RecoveryMs the time from the resume to the next
// grant.
type FreezeFigures struct {
	// Servers is how many servers the lock uses, FrozenServers how many
	// of them were stopped.
	Servers       int `json:"servers"`
	FrozenServers int `json:"frozen_servers"`
	// FreezeForMs is the freeze asked for (--freeze-for), FrozenMsMax
	// the longest measured, StallMsMax the longest time without a grant
	// around it (ms).
	FreezeForMs float64 `json:"freeze_for_ms"`
	FrozenMsMax float64 `json:"frozen_ms_max"`
	StallMsMax  float64 `json:"stall_ms_max"`
	// Acquisitions before, during and after the freeze.
	AcquiresBefore int64 `json:"acquires_before"`
	AcquiresFrozen int64 `json:"acquires_frozen"`
	AcquiresAfter  int64 `json:"acquires_after"`
	// SessionLost counts sessions that expired; Unrecovered repeats with
	// no grant after the resume.
	SessionLost int64 `json:"session_lost"`
	Unrecovered int64 `json:"unrecovered,omitempty"`
}

// PausesFigures are what the pauses scenario measured: Jepsen's etcd lock
// test in miniature, clients looping on one lock with a register in
// lockbench's memory while the lock's servers are stopped on a schedule.
type PausesFigures struct {
	// Servers is how many servers the lock uses; every EveryMs one of
	// them, drawn at random, was stopped for FreezeForMs, for ForS
	// seconds in all: Pauses times over the repeats.
	Servers     int     `json:"servers"`
	FreezeForMs float64 `json:"freeze_for_ms"`
	EveryMs     float64 `json:"every_ms"`
	ForS        float64 `json:"for_s"`
	Pauses      int64   `json:"pauses"`
	SessionLost int64   `json:"session_lost"`
	// LostShareUnfenced and LostShareFenced are each repeat's lost
	// updates over its acknowledged writes: the share of the increments
	// the register took that a later write overwrote, without fencing and
	// with the lock's token checked (Jepsen's figure is the first).
	LostShareUnfenced []float64 `json:"lost_share_unfenced"`
	LostShareFenced   []float64 `json:"lost_share_fenced"`
}

// ClockJumpFigures are what the clockjump scenario measured: while a
// holder held the lock, its servers' wall clocks jumped forward one after
// another (JumpMs each) and a second client asked for the lock after each.
type ClockJumpFigures struct {
	Servers int     `json:"servers"`
	JumpMs  float64 `json:"jump_ms"`
	// Granted counts the repeats in which the second client got the lock
	// while the holder held it; JumpsToGrant is, for each, how many
	// servers' clocks had jumped by then.
	Granted      int64   `json:"granted"`
	JumpsToGrant []int64 `json:"jumps_to_grant,omitempty"`
}
