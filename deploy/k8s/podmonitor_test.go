package k8s

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	sigsjson "sigs.k8s.io/json"
	sigsyaml "sigs.k8s.io/yaml"
)

// podMonitorKind is the Prometheus Operator's PodMonitor, a custom
// resource the Kubernetes API types do not hold.
var podMonitorKind = schema.GroupVersionKind{Group: "monitoring.coreos.com", Version: "v1", Kind: "PodMonitor"}

// podMonitor is the part of the operator's PodMonitor (monitoring.coreos.com/v1)
// that deploy/k8s uses, field names as in its CRD; a field outside it
// fails the strict decode, as an unknown field of a built-in kind does.
type podMonitor struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              struct {
		Selector            metav1.LabelSelector `json:"selector"`
		PodMetricsEndpoints []struct {
			Port        string `json:"port"`
			Path        string `json:"path,omitempty"`
			Interval    string `json:"interval,omitempty"`
			Relabelings []struct {
				SourceLabels []string `json:"sourceLabels,omitempty"`
				TargetLabel  string   `json:"targetLabel,omitempty"`
			} `json:"relabelings,omitempty"`
		} `json:"podMetricsEndpoints"`
	} `json:"spec"`
}

func (p *podMonitor) DeepCopyObject() runtime.Object {
	c := *p
	return &c
}

// decodeCRD decodes doc strictly when it is a custom resource deploy/k8s
// uses (a PodMonitor); crd is false for every other kind.
func decodeCRD(doc []byte) (obj runtime.Object, crd bool, err error) {
	var tm metav1.TypeMeta
	if err := sigsyaml.Unmarshal(doc, &tm); err != nil || tm.GroupVersionKind() != podMonitorKind {
		return nil, false, nil
	}
	j, err := sigsyaml.YAMLToJSONStrict(doc)
	if err != nil {
		return nil, true, err
	}
	var pm podMonitor
	strict, err := sigsjson.UnmarshalStrict(j, &pm)
	for _, e := range strict {
		err = fmt.Errorf("%s: %w", podMonitorKind.Kind, e)
	}
	return &pm, true, err
}

// The shard pods serve --metrics-addr on a port they declare, by the
// name the PodMonitor scrapes and the number their scrape annotations
// give, and the PodMonitor selects exactly the shard pods.
func TestShardsExposeMetrics(t *testing.T) {
	m := loadManifests(t)
	s := shardJob(t, m)
	addr, ok := flagValue(s.c.Args, "metrics-addr")
	if !ok {
		t.Fatal("the shards run without --metrics-addr: a sharded run cannot be watched live")
	}
	port := addr[strings.LastIndex(addr, ":")+1:]
	if host := strings.TrimSuffix(addr, ":"+port); host != "" {
		t.Errorf("--metrics-addr %q listens on %q only: Prometheus reaches the pod on its IP", addr, host)
	}
	i := slices.IndexFunc(s.c.Ports, func(p corev1.ContainerPort) bool { return strconv.Itoa(int(p.ContainerPort)) == port })
	if i < 0 {
		t.Fatalf("no containerPort %s declared for --metrics-addr %s", port, addr)
	}
	ann := s.job.Spec.Template.Annotations
	if ann["prometheus.io/scrape"] != "true" || ann["prometheus.io/port"] != port || ann["prometheus.io/path"] != "/metrics" {
		t.Errorf("scrape annotations %v, want scrape true, port %s, path /metrics", ann, port)
	}
	var monitors []*podMonitor
	for _, o := range m.objects {
		if pm, ok := o.obj.(*podMonitor); ok {
			monitors = append(monitors, pm)
		}
	}
	if len(monitors) != 1 {
		t.Fatalf("%d PodMonitors, want one", len(monitors))
	}
	pm := monitors[0]
	sel, err := metav1.LabelSelectorAsSelector(&pm.Spec.Selector)
	if err != nil || sel.Empty() {
		t.Fatalf("PodMonitor selector %v: %v", pm.Spec.Selector, err)
	}
	for _, p := range pods(m) {
		shard := p.spec == &s.job.Spec.Template.Spec
		if got := sel.Matches(labels.Set(p.labels)); got != shard {
			t.Errorf("PodMonitor selects pods of %s: %v, want %v (shards only)", p.owner, got, shard)
		}
	}
	for _, ep := range pm.Spec.PodMetricsEndpoints {
		if ep.Port != s.c.Ports[i].Name || ep.Path != "/metrics" {
			t.Errorf("PodMonitor scrapes port %q path %q, want %q /metrics", ep.Port, ep.Path, s.c.Ports[i].Name)
		}
	}
}

func TestPodMonitorDecodesStrictly(t *testing.T) {
	doc := []byte("apiVersion: monitoring.coreos.com/v1\nkind: PodMonitor\nmetadata:\n  name: x\nspec:\n  selector: {}\n  podMetricsEndpoints:\n    - port: metrics\n      intervall: 5s\n")
	if _, crd, err := decodeCRD(doc); !crd || err == nil || !strings.Contains(err.Error(), "intervall") {
		t.Errorf("crd %v, err %v: want a strict error naming intervall", crd, err)
	}
}
