package k8s

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/spf13/pflag"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/lockbench/lockbench/cmd/lockbench/cli"
	"github.com/lockbench/lockbench/engine"
	"github.com/lockbench/lockbench/impl"
	_ "github.com/lockbench/lockbench/impl/all"
	_ "github.com/lockbench/lockbench/scenarios" // the load scenarios
)

// pendingRunFlags are flags that sharding (issue 13) adds to `lockbench
// run` on a branch of its own, written here against the agreed contract
// (--shard i/N or auto/N, --start-at RFC3339). Until that branch lands,
// cli.RunFlags lacks them, so parseRun sets them aside rather than fail,
// and TestShardJob checks --shard's value itself. Every other flag must be
// one of RunFlags'.
var pendingRunFlags = []string{"shard", "start-at"}

const completionIndexVar = "$(JOB_COMPLETION_INDEX)"

// flagValue returns the value of --name in args, given as --name V or
// --name=V.
func flagValue(args []string, name string) (string, bool) {
	for i, a := range args {
		if a == "--"+name && i+1 < len(args) {
			return args[i+1], true
		}
		if v, ok := strings.CutPrefix(a, "--"+name+"="); ok {
			return v, true
		}
	}
	return "", false
}

// parseRun parses `lockbench run`'s arguments with its own flags and
// returns each flag set to its value.
func parseRun(args []string) (map[string]string, error) {
	fs := cli.RunFlags()
	var rest []string
	for i := 0; i < len(args); i++ {
		name, _, hasValue := strings.Cut(strings.TrimPrefix(args[i], "--"), "=")
		if slices.Contains(pendingRunFlags, name) && fs.Lookup(name) == nil && strings.HasPrefix(args[i], "--") {
			if !hasValue {
				i++ // its value
			}
			continue
		}
		rest = append(rest, args[i])
	}
	if err := fs.Parse(rest); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	out := map[string]string{}
	fs.Visit(func(f *pflag.Flag) { out[f.Name] = f.Value.String() })
	return out, nil
}

// lockbenchContainer returns the pod's container whose first argument is
// the given lockbench subcommand.
func lockbenchContainer(spec *corev1.PodSpec, sub string) (corev1.Container, bool) {
	for _, c := range spec.Containers {
		if len(c.Args) > 0 && c.Args[0] == sub {
			return c, true
		}
	}
	return corev1.Container{}, false
}

// shard is the Indexed Job of shards, as the merge needs to know it.
type shard struct {
	job       *batchv1.Job
	c         corev1.Container
	n         int
	out       string // --out, with $(JOB_COMPLETION_INDEX) in it
	claim     string // the PVC that holds out
	mountPath string // where the container mounts it
}

func shardJob(t *testing.T, m manifests) shard {
	t.Helper()
	var found []shard
	for _, j := range all[*batchv1.Job](m) {
		if mode := j.obj.Spec.CompletionMode; mode == nil || *mode != batchv1.IndexedCompletion {
			continue
		}
		c, ok := lockbenchContainer(&j.obj.Spec.Template.Spec, "run")
		if !ok {
			t.Fatalf("Indexed Job %s runs no `lockbench run`", j.obj.Name)
		}
		s := shard{job: j.obj, c: c}
		if p := j.obj.Spec.Completions; p != nil {
			s.n = int(*p)
		}
		s.out, _ = flagValue(c.Args, "out")
		s.claim, s.mountPath = volumeClaim(&j.obj.Spec.Template.Spec, c, s.out)
		found = append(found, s)
	}
	if len(found) != 1 {
		t.Fatalf("%d Indexed Jobs, want one (the shards)", len(found))
	}
	return found[0]
}

// volumeClaim returns the PersistentVolumeClaim that holds dir in the
// container, and where the container mounts it.
func volumeClaim(spec *corev1.PodSpec, c corev1.Container, dir string) (claim, mountPath string) {
	for _, vm := range c.VolumeMounts {
		if dir != vm.MountPath && !strings.HasPrefix(dir, strings.TrimSuffix(vm.MountPath, "/")+"/") {
			continue
		}
		for _, v := range spec.Volumes {
			if v.Name == vm.Name && v.PersistentVolumeClaim != nil {
				return v.PersistentVolumeClaim.ClaimName, vm.MountPath
			}
		}
	}
	return "", ""
}

func TestShardJob(t *testing.T) {
	m := loadManifests(t)
	s := shardJob(t, m)
	spec := s.job.Spec
	if p := spec.Parallelism; s.n < 1 || p == nil || int(*p) != s.n {
		t.Errorf("completions %d, parallelism %s: want equal, ≥ 1 (every shard at the rendezvous at once)", s.n, deref(p))
	}
	if got, want := firstOf(flagValue(s.c.Args, "shard")), fmt.Sprintf("auto/%d", s.n); got != want {
		t.Errorf("--shard %q, want %q (completions is %d)", got, want, s.n)
	}
	if !strings.Contains(s.out, completionIndexVar) {
		t.Errorf("--out %q does not contain %s: every shard would write the same directory", s.out, completionIndexVar)
	}
	if s.claim == "" {
		t.Errorf("--out %q is on no PersistentVolumeClaim mounted in the container: results would vanish with the pod", s.out)
	}
	if spec.Template.Spec.RestartPolicy != corev1.RestartPolicyNever || spec.BackoffLimit == nil || *spec.BackoffLimit != 0 {
		t.Errorf("restartPolicy %q, backoffLimit %s: want Never and 0 (a shard run again finds its --out taken and misses the rendezvous)",
			spec.Template.Spec.RestartPolicy, deref(spec.BackoffLimit))
	}
	if spec.ActiveDeadlineSeconds == nil {
		t.Error("no activeDeadlineSeconds: nothing bounds a stuck run")
	}
	env, _ := containerEnv(m, s.c, 0)
	args, _ := expandAll(s.c.Args, env)
	clients, _ := flagValue(args, "clients")
	for _, v := range strings.Split(clients, ",") {
		if c, err := strconv.Atoi(v); err != nil || s.n > 0 && c%s.n != 0 {
			t.Errorf("--clients %s: %q is not a multiple of %d: shards would carry unequal loads", clients, v, s.n)
		}
	}
}

func firstOf(s string, _ bool) string { return s }

func deref(p *int32) string {
	if p == nil {
		return "unset"
	}
	return strconv.Itoa(int(*p))
}

func TestResultsClaim(t *testing.T) {
	m := loadManifests(t)
	s := shardJob(t, m)
	var claims []*corev1.PersistentVolumeClaim
	for _, c := range all[*corev1.PersistentVolumeClaim](m) {
		if c.obj.Name == s.claim {
			claims = append(claims, c.obj)
		}
	}
	if len(claims) != 1 {
		t.Fatalf("%d PersistentVolumeClaims named %q, want one", len(claims), s.claim)
	}
	if !slices.Contains(claims[0].Spec.AccessModes, corev1.ReadWriteMany) {
		t.Errorf("claim %s: access modes %v: shards on several nodes need ReadWriteMany", s.claim, claims[0].Spec.AccessModes)
	}
}

// TestMergeJob: the merge mounts the shards' claim at the same place and
// names every shard's directory, shard-0 … shard-(N-1), and no other.
func TestMergeJob(t *testing.T) {
	m := loadManifests(t)
	s := shardJob(t, m)
	var merges []*batchv1.Job
	for _, j := range all[*batchv1.Job](m) {
		if _, ok := lockbenchContainer(&j.obj.Spec.Template.Spec, "merge"); ok {
			merges = append(merges, j.obj)
		}
	}
	if len(merges) != 1 {
		t.Fatalf("%d Jobs run `lockbench merge`, want one", len(merges))
	}
	spec := &merges[0].Spec.Template.Spec
	c, _ := lockbenchContainer(spec, "merge")
	out, dirs, err := mergeArgs(c.Args[1:])
	if err != nil {
		t.Fatalf("merge args %q: %v", c.Args, err)
	}
	if claim, mount := volumeClaim(spec, c, out); claim != s.claim || mount != s.mountPath {
		t.Errorf("merge --out %q is on claim %q at %q, want the shards' %q at %q", out, claim, mount, s.claim, s.mountPath)
	}
	var want []string
	for i := range s.n {
		want = append(want, strings.ReplaceAll(s.out, completionIndexVar, strconv.Itoa(i)))
	}
	if !slices.Equal(dirs, want) {
		t.Errorf("merge reads %q, want the %d shards' directories %q", dirs, s.n, want)
	}
	if slices.Contains(want, out) {
		t.Errorf("merge --out %q is a shard's directory", out)
	}
}

// mergeArgs splits `lockbench merge`'s arguments into --out and the shard
// directories.
func mergeArgs(args []string) (out string, dirs []string, err error) {
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case a == "--out" && i+1 < len(args):
			out = args[i+1]
			i++
		case strings.HasPrefix(a, "--out="):
			out = strings.TrimPrefix(a, "--out=")
		case strings.HasPrefix(a, "-"):
			return "", nil, fmt.Errorf("flag %q: this test knows --out only", a)
		default:
			dirs = append(dirs, a)
		}
	}
	if out == "" {
		return "", nil, fmt.Errorf("no --out")
	}
	return out, dirs, nil
}

// TestRunArgsAreRunFlags expands each `lockbench run` container's args as
// Kubernetes will, with the plan's ConfigMap values, and parses them with
// the real flags: a misspelt flag or a bad value fails here, not in the
// cluster.
func TestRunArgsAreRunFlags(t *testing.T) {
	m := loadManifests(t)
	n := 0
	for _, p := range pods(m) {
		c, ok := lockbenchContainer(p.spec, "run")
		if !ok {
			continue
		}
		n++
		env, _ := containerEnv(m, c, 0)
		args, _ := expandAll(c.Args[1:], env)
		flags, err := parseRun(args)
		if err != nil {
			t.Errorf("%s: lockbench run %q: %v", p.owner, args, err)
			continue
		}
		for _, tc := range []struct {
			flag  string
			known func(string) bool
		}{
			{"impl", func(n string) bool { _, ok := impl.Lookup(n); return ok }},
			{"scenario", func(n string) bool { _, ok := engine.LookupScenario(n); return ok }},
			{"clients", func(n string) bool { c, err := strconv.Atoi(n); return err == nil && c > 0 }},
		} {
			val, ok := flags[tc.flag]
			if !ok {
				t.Errorf("%s: sets no --%s", p.owner, tc.flag)
			}
			for _, v := range strings.Split(val, ",") {
				if ok && !tc.known(v) {
					t.Errorf("%s: --%s %s: %q is not valid", p.owner, tc.flag, val, v)
				}
			}
		}
	}
	if n == 0 {
		t.Fatal("no container runs `lockbench run`")
	}
}
