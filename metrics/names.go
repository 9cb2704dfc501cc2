package metrics

// The metric names the endpoint serves; the dashboard in deploy/grafana
// uses only these (and the Go and process collectors' own).
const (
	Acquisitions   = "lockbench_acquisitions_total"
	Errors         = "lockbench_errors_total"
	ErrorsByClass  = "lockbench_errors_by_class_total"
	Retries        = "lockbench_retries_total"
	Notifications  = "lockbench_notifications_total"
	Wakeups        = "lockbench_wakeups_total"
	ReleaseWakeups = "lockbench_release_wakeups_total"
	RoundTrips     = "lockbench_round_trips_total"
	Abandonments   = "lockbench_abandonments_total"
	Renewals       = "lockbench_renewals_total"
	Violations     = "lockbench_safety_violations_total"
	Holding        = "lockbench_clients_holding"
	Waiting        = "lockbench_clients_waiting"
	Running        = "lockbench_cell_running"
	AcquireLatency = "lockbench_acquire_latency_seconds"
	ReleaseLatency = "lockbench_release_latency_seconds"
	GeneratorCPU   = "lockbench_generator_cpu_share"
	ScheduleLag    = "lockbench_schedule_lag_seconds"
)

// cellLabels are every per-cell series' labels.
var cellLabels = []string{"impl", "scenario", "clients", "shard", "run_id"}
