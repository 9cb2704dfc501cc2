package k8s

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/spf13/pflag"

	"github.com/lockbench/lockbench/cmd/lockbench/cli"
)

// serversDir holds the in-cluster servers; shards' addresses name them.
const serversDir = "servers"

// TestSelectors: every Service selects pods that exist in its directory
// and reaches a port they open; a StatefulSet's selector matches its own
// pods and its serviceName is such a Service; a spread constraint counts
// the pods it is written for.
func TestSelectors(t *testing.T) {
	m := loadManifests(t)
	for _, svc := range all[*corev1.Service](m) {
		sel := svc.obj.Spec.Selector
		var selected []pod
		for _, p := range podsIn(m, svc.dir) {
			if len(sel) > 0 && labels.SelectorFromSet(sel).Matches(labels.Set(p.labels)) {
				selected = append(selected, p)
			}
		}
		if len(selected) == 0 {
			t.Errorf("Service %s: selector %v matches no pod in %s/", svc.obj.Name, sel, svc.dir)
			continue
		}
		for _, port := range svc.obj.Spec.Ports {
			for _, p := range selected {
				if !opensPort(p, port) {
					t.Errorf("Service %s port %s: target %s is no container port of %s", svc.obj.Name, port.Name, port.TargetPort.String(), p.owner)
				}
			}
		}
	}
	for _, s := range all[*appsv1.StatefulSet](m) {
		matches(t, "StatefulSet "+s.obj.Name+" selector", s.obj.Spec.Selector, s.obj.Spec.Template.Labels)
		if service(m, s.dir, s.obj.Spec.ServiceName) == nil {
			t.Errorf("StatefulSet %s: serviceName %q is no Service in %s/", s.obj.Name, s.obj.Spec.ServiceName, s.dir)
		}
	}
	for _, p := range pods(m) {
		for _, c := range p.spec.TopologySpreadConstraints {
			matches(t, p.owner+" topologySpreadConstraint", c.LabelSelector, p.labels)
		}
	}
}

func matches(t *testing.T, what string, sel *metav1.LabelSelector, podLabels map[string]string) {
	t.Helper()
	s, err := metav1.LabelSelectorAsSelector(sel)
	switch {
	case err != nil:
		t.Errorf("%s: %v", what, err)
	case sel == nil || s.Empty() || !s.Matches(labels.Set(podLabels)):
		t.Errorf("%s %v does not match the pods' labels %v", what, sel, podLabels)
	}
}

func opensPort(p pod, port corev1.ServicePort) bool {
	for _, c := range p.spec.Containers {
		for _, cp := range c.Ports {
			if port.TargetPort.StrVal == cp.Name && cp.Name != "" ||
				port.TargetPort.StrVal == "" && int(cp.ContainerPort) == port.TargetPort.IntValue() ||
				port.TargetPort.StrVal == "" && port.TargetPort.IntVal == 0 && cp.ContainerPort == port.Port {
				return true
			}
		}
	}
	return false
}

func service(m manifests, dir, name string) *corev1.Service {
	for _, s := range all[*corev1.Service](m) {
		if s.dir == dir && s.obj.Name == name {
			return s.obj
		}
	}
	return nil
}

// serverEnv returns the variables the shards take from ConfigMaps whole
// (envFrom): the servers' addresses.
func serverEnv(t *testing.T, m manifests) map[string]string {
	t.Helper()
	s := shardJob(t, m)
	env := map[string]string{}
	for _, from := range s.c.EnvFrom {
		if from.ConfigMapRef == nil {
			continue
		}
		if cm := configMap(m, from.ConfigMapRef.Name); cm != nil {
			maps.Copy(env, cm.Data)
		}
	}
	if len(env) == 0 {
		t.Fatal("the shards take no server addresses from a ConfigMap")
	}
	return env
}

// TestRunReadsItsEnv fails if `lockbench run` stops reading a LOCKBENCH_…
// variable that a run container is given (the servers' addresses, the run
// id): each must become its flag's default.
func TestRunReadsItsEnv(t *testing.T) {
	m := loadManifests(t)
	s := shardJob(t, m)
	env, _ := containerEnv(m, s.c, 0)
	var names []string
	for name := range env {
		if strings.HasPrefix(name, "LOCKBENCH_") {
			names = append(names, name)
		}
	}
	if len(names) == 0 {
		t.Fatal("the shards are given no LOCKBENCH_… variable")
	}
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			t.Setenv(name, "from-env:1")
			read := false
			cli.RunFlags().VisitAll(func(f *pflag.Flag) { read = read || f.DefValue == "from-env:1" })
			if !read {
				t.Errorf("no flag of lockbench run defaults to $%s", name)
			}
		})
	}
}

// TestServerAddresses: each address in the servers' ConfigMap is a port of
// a Service in servers/, by the Service's name or by a StatefulSet pod's
// own name (pod.service), and a list that names a StatefulSet's pods names
// each of them once: the whole ensemble, all the Redlock masters.
func TestServerAddresses(t *testing.T) {
	m := loadManifests(t)
	for name, val := range serverEnv(t, m) {
		t.Run(name, func(t *testing.T) {
			seen := map[string][]int{} // StatefulSet → ordinals named
			for _, addr := range strings.Split(val, ",") {
				host, port, _ := strings.Cut(strings.TrimSpace(addr), ":")
				sts, ordinal, svc, err := resolve(m, host)
				if err != nil {
					t.Errorf("%q: %v", addr, err)
					continue
				}
				if !slices.ContainsFunc(svc.Spec.Ports, func(p corev1.ServicePort) bool { return strconv.Itoa(int(p.Port)) == port }) {
					t.Errorf("%q: Service %s has no port %q", addr, svc.Name, port)
				}
				if sts != nil {
					seen[sts.Name] = append(seen[sts.Name], ordinal)
				}
			}
			for _, s := range all[*appsv1.StatefulSet](m) {
				got, ok := seen[s.obj.Name]
				if !ok {
					continue
				}
				slices.Sort(got)
				if want := ordinals(s.obj); !slices.Equal(got, want) {
					t.Errorf("%s names pods %v of StatefulSet %s, want each of %v once", name, got, s.obj.Name, want)
				}
			}
		})
	}
}

var podHost = regexp.MustCompile(`^(.+)-(\d+)\.([^.]+)$`)

// resolve finds what host names in servers/: a Service, or a StatefulSet's
// pod through its headless Service.
func resolve(m manifests, host string) (sts *appsv1.StatefulSet, ordinal int, svc *corev1.Service, err error) {
	if svc := service(m, serversDir, host); svc != nil {
		return nil, 0, svc, nil
	}
	sub := podHost.FindStringSubmatch(host)
	if sub == nil {
		return nil, 0, nil, fmt.Errorf("%s is no Service in %s/ nor a pod-N.service name", host, serversDir)
	}
	ordinal, _ = strconv.Atoi(sub[2])
	for _, s := range all[*appsv1.StatefulSet](m) {
		if s.dir != serversDir || s.obj.Name != sub[1] || s.obj.Spec.ServiceName != sub[3] {
			continue
		}
		svc := service(m, serversDir, sub[3])
		switch {
		case svc == nil:
			return nil, 0, nil, fmt.Errorf("no Service %s", sub[3])
		case svc.Spec.ClusterIP != corev1.ClusterIPNone:
			return nil, 0, nil, fmt.Errorf("Service %s is not headless: its pods have no names of their own", svc.Name)
		case !slices.Contains(ordinals(s.obj), ordinal):
			return nil, 0, nil, fmt.Errorf("StatefulSet %s has no pod %d", s.obj.Name, ordinal)
		}
		return s.obj, ordinal, svc, nil
	}
	return nil, 0, nil, fmt.Errorf("no StatefulSet %s with serviceName %s in %s/", sub[1], sub[3], serversDir)
}

func ordinals(s *appsv1.StatefulSet) []int {
	n := 1
	if s.Spec.Replicas != nil {
		n = int(*s.Spec.Replicas)
	}
	var out []int
	for i := range n {
		out = append(out, i)
	}
	return out
}

// TestZooKeeperEnsemble: ZOO_SERVERS names each pod of the StatefulSet
// once, server.N being pod N-1, which is the myid the container derives
// from its pod's ordinal; the sandbox's settings that lockbench relies on.
func TestZooKeeperEnsemble(t *testing.T) {
	m := loadManifests(t)
	var found int
	for _, s := range all[*appsv1.StatefulSet](m) {
		for _, c := range s.obj.Spec.Template.Spec.Containers {
			env := map[string]string{}
			for _, e := range c.Env {
				env[e.Name] = e.Value
			}
			if _, ok := env["ZOO_SERVERS"]; !ok {
				continue
			}
			found++
			checkEnsemble(t, s.obj, c, env)
		}
	}
	if found != 1 {
		t.Fatalf("%d ZooKeeper containers (with ZOO_SERVERS), want one StatefulSet's", found)
	}
}

var zooServer = regexp.MustCompile(`^server\.(\d+)=([\w.-]+):(\d+):(\d+);(\d+)$`)

func checkEnsemble(t *testing.T, s *appsv1.StatefulSet, c corev1.Container, env map[string]string) {
	t.Helper()
	if s.Spec.Replicas == nil || *s.Spec.Replicas != 3 {
		t.Errorf("StatefulSet %s: replicas %v, want 3 (a quorum of 2)", s.Name, s.Spec.Replicas)
	}
	if s.Spec.PodManagementPolicy != appsv1.ParallelPodManagement {
		t.Errorf("StatefulSet %s: podManagementPolicy %q: with OrderedReady the first member waits for a quorum alone", s.Name, s.Spec.PodManagementPolicy)
	}
	// The container derives ZOO_MY_ID from the ordinal in its hostname,
	// in the shell that Kubernetes starts once it has expanded $(…).
	cmd, _ := expandAll(c.Command, map[string]string{})
	if !strings.Contains(strings.Join(cmd, " "), "ZOO_MY_ID=$((${HOSTNAME##*-} + 1))") {
		t.Errorf("command %q does not set ZOO_MY_ID to the pod's ordinal + 1", cmd)
	}
	var ids []int
	for _, entry := range strings.Fields(env["ZOO_SERVERS"]) {
		sub := zooServer.FindStringSubmatch(entry)
		if sub == nil {
			t.Errorf("ZOO_SERVERS entry %q is not server.N=host:peer:election;client", entry)
			continue
		}
		id, _ := strconv.Atoi(sub[1])
		if want := fmt.Sprintf("%s-%d.%s", s.Name, id-1, s.Spec.ServiceName); sub[2] != want {
			t.Errorf("%q: server.%d is pod %s, whose myid is %d; want host %s", entry, id, sub[2], id, want)
		}
		for _, port := range sub[3:] {
			if !slices.ContainsFunc(c.Ports, func(p corev1.ContainerPort) bool { return strconv.Itoa(int(p.ContainerPort)) == port }) {
				t.Errorf("%q: port %s is not a container port", entry, port)
			}
		}
		ids = append(ids, id)
	}
	if slices.Sort(ids); !slices.Equal(ids, []int{1, 2, 3}) {
		t.Errorf("ZOO_SERVERS ids %v, want 1, 2, 3", ids)
	}
	for key, want := range map[string]string{
		"ZOO_STANDALONE_ENABLED": "false", "ZOO_MAX_CLIENT_CNXNS": "0", "ZOO_ADMINSERVER_ENABLED": "false", "ZOO_TICK_TIME": "500",
	} {
		if env[key] != want {
			t.Errorf("%s = %q, want %q", key, env[key], want)
		}
	}
	for _, cmd := range []string{"mntr", "ruok", "srvr"} {
		if !slices.Contains(strings.Split(env["ZOO_4LW_COMMANDS_WHITELIST"], ","), cmd) {
			t.Errorf("ZOO_4LW_COMMANDS_WHITELIST %q lacks %s (lockbench reads the servers' counters)", env["ZOO_4LW_COMMANDS_WHITELIST"], cmd)
		}
	}
}
