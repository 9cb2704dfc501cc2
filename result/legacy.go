package result

import "strings"

// upgradeLegacy sets the typed fault figures of a cell written before
// schema 3 from the figures it kept by name (Faults.Details), so that
// readers of the typed fields find them. The cell's Verdict and Details
// stay as read: renderers show such a cell's verdict as it was written,
// since what its sentence needed (the bound's name, the staging) was
// never stored as a figure. It is the one place that reads Details.
func upgradeLegacy(c *Cell) {
	f := c.Faults
	if f == nil || len(f.Details) == 0 {
		return
	}
	d := f.Details
	n := func(key string) int64 { return int64(d[key]) }
	f.OwnServers = f.OwnServers || d["own_servers"] > 0
	switch c.Scenario {
	case "crash":
		if has(d, "reset_recovered", "reset_unfreed", "silent_recovered", "silent_unfreed", "silent_wait_ms") {
			f.ConnCrash = legacyConnCrash(d)
		} else {
			f.Crash = &CrashFigures{Waiters: int(d["waiters"]), Unrecovered: n("unrecovered")}
		}
	case "pause":
		if _, conn := d["pause_ms"]; conn {
			f.ConnPause = &ConnPauseFigures{PauseMs: d["pause_ms"], PausedMsMax: d["paused_ms_max"],
				GrantedDuringPause: n("granted_during_pause"), HolderLost: n("holder_lost"), Unrecovered: n("unrecovered")}
		} else {
			f.Pause = &PauseFigures{StaleWrites: n("stale_writes"), UnfencedAccepted: n("unfenced_accepted")}
		}
	case "failover":
		f.Failover = &FailoverFigures{HoldWindowMs: d["hold_window_ms"], OverlappingRepeats: n("overlapping_repeats"),
			Promoted: n("promoted"), MastersKilled: n("masters_killed"), SessionMoved: n("session_moved"),
			SessionMoveMsMean: d["session_move_ms_mean"], SessionLost: n("session_lost"), HolderReleaseFailed: n("holder_release_failed")}
	case "restart":
		if _, conn := d["restart_ms_max"]; conn {
			f.ConnRestart = &ConnRestartFigures{RestartMsMax: d["restart_ms_max"], OverlappingRepeats: n("overlapping_repeats"),
				HolderReleaseOK: n("holder_release_ok"), HolderReleaseLost: n("holder_release_lost"), HolderReleaseFailed: n("holder_release_failed")}
		} else {
			f.Restart = &RestartFigures{RestartDelayMs: d["restart_delay_ms"], FirstHolderMasters: int(d["first_holder_masters"]),
				OverlappingRepeats: n("overlapping_repeats")}
		}
	case "latency":
		f.Latency = &LatencyFigures{NetDelayMs: d["net_delay_ms"], NetJitterMs: d["net_jitter_ms"], Proxies: int(d["proxies"])}
	case "partition":
		f.Partition, f.EnsemblePartition = legacyPartition(d)
	case "freeze":
		f.Freeze = &FreezeFigures{Servers: int(d["servers"]), FrozenServers: int(d["frozen_servers"]), FreezeForMs: d["freeze_for_ms"],
			FrozenMsMax: d["frozen_ms_max"], StallMsMax: d["stall_ms_max"], AcquiresBefore: n("acquires_before"),
			AcquiresFrozen: n("acquires_frozen"), AcquiresAfter: n("acquires_after"), SessionLost: n("session_lost"), Unrecovered: n("unrecovered")}
	}
}

// has says whether d holds any of keys.
func has(d map[string]float64, keys ...string) bool {
	for _, k := range keys {
		if _, ok := d[k]; ok {
			return true
		}
	}
	return false
}

// legacyConnCrash is a connection lock's crash from its named figures:
// the silent holder's recovery was kept as p50 and max only.
func legacyConnCrash(d map[string]float64) *ConnCrashFigures {
	end := func(way string) ConnEnd {
		e := ConnEnd{Recovered: int64(d[way+"_recovered"]), Unfreed: int64(d[way+"_unfreed"])}
		if e.Recovered > 0 {
			e.RecoveryMs = &Spread{Count: e.Recovered, P50: d[way+"_recovery_ms_p50"], Max: d[way+"_recovery_ms_max"]}
		}
		return e
	}
	cc := &ConnCrashFigures{Waiters: int(d["waiters"]), Reset: end("reset"), Silent: end("silent"), SilentWaitMs: d["silent_wait_ms"]}
	if _, ok := d["keepalive_idle_s"]; ok {
		cc.Keepalive = &Keepalive{Reported: true, IdleS: d["keepalive_idle_s"], IntervalS: d["keepalive_interval_s"], Count: int(d["keepalive_count"])}
	}
	return cc
}

// legacyPartition is a partition's figures: of a quorum of masters when
// it cut some, else of an ensemble.
func legacyPartition(d map[string]float64) (*PartitionFigures, *EnsemblePartitionFigures) {
	n := func(key string) int64 { return int64(d[key]) }
	if _, ok := d["masters_cut_minority"]; ok {
		return &PartitionFigures{MastersCutMinority: int(d["masters_cut_minority"]), MastersCutMajority: int(d["masters_cut_majority"]),
			AcquiresMinorityCut: n("acquires_minority_cut"), ErrorsMinorityCut: n("errors_minority_cut"),
			AttemptsMajorityCut: n("attempts_majority_cut"), AcquiresMajorityCut: n("acquires_majority_cut"),
			NoQuorumMajorityCut: n("no_quorum_majority_cut"), HungMajorityCut: n("hung_majority_cut"),
			FailMsMaxMajorityCut: d["fail_ms_majority_cut_max"]}, nil
	}
	return nil, &EnsemblePartitionFigures{OwnEnsemble: d["own_ensemble"] > 0, ServersCut: n("servers_cut"),
		SessionMoved: n("session_moved"), SessionLost: n("session_lost"), AcquiresDuringCut: n("acquires_during_cut")}
}

// upgradeServerCounts sets what a cell written before schema 4 had its
// servers count, typed, from their counters by name: the cell's own and,
// in a shard, its readings for the merge.
func upgradeServerCounts(c *Cell) {
	if c.ServerCounts == nil && c.Server != nil {
		c.ServerCounts = legacyServerCounts(c.Server)
	}
	if r := c.ServerRaw; r != nil && r.CountsBefore == nil && r.Before != nil && r.After != nil {
		r.CountsBefore, r.CountsAfter = legacyServerCounts(r.Before), legacyServerCounts(r.After)
		r.CountsBefore.ClientNotifications, r.CountsAfter.ClientNotifications = 0, 0
	}
}

// legacyServerCounts is what a cell written before schema 4 had its
// servers count, from their counters by the names the kinds of that time
// gave them. It is the one reader of counter names outside the kinds'
// own folders, and it is frozen: a kind added since writes its counts
// typed (Cell.ServerCounts) and never appears here.
func legacyServerCounts(raw map[string]int64) *ServerCounts {
	c := &ServerCounts{ClientNotifications: raw["client_notifications"], Forks: raw["total_forks"]}
	if w, ok := raw["watch_triggered"]; ok {
		c.Watches = &w
	}
	if n, ok := raw["cluster_messages_sent"]; ok {
		for _, hb := range []string{"ping", "pong", "meet"} {
			n -= raw["cluster_stats_messages_"+hb+"_sent"]
		}
		c.Messages, c.Unit = n, "cluster-bus messages (heartbeats aside)"
		return c
	}
	for _, k := range []struct{ in, out, unit string }{
		{"packets_received", "packets_sent", "packets"},
		{"grpc_messages_received", "grpc_messages_sent", "gRPC messages"},
		{"nats_messages", "", "NATS messages"},
		{"apiserver_lease_requests", "", "apiserver Lease requests"},
	} {
		if n, ok := raw[k.in]; ok {
			c.Messages, c.Unit = n+raw[k.out], k.unit
			return c
		}
	}
	for k, v := range raw {
		if strings.HasPrefix(k, "cmdstat_") && strings.HasSuffix(k, "_calls") && k != "cmdstat_info_calls" {
			c.Messages += v
			c.Unit, c.Pushes = "commands + pushes", true
		}
	}
	return c
}
