package abuse

import (
	"fmt"
	"strconv"
	"time"

	"gpugraph/bench/fleetgen"
	"gpugraph/internal/dataset"
	"gpugraph/internal/services/podmetrics"
	"gpugraph/models"
)

// The fixture's credentials. The attacker is organization 0 of the fleet,
// the victim organization 1; a third, the platform operator's, holds the
// administration the attacks try to reach.
const (
	// ReaderKey is the attacker's read-only key: every read, no write.
	ReaderKey = "abuse-reader"
	// AgentKey is the attacker's node agent key (nodes.report), the
	// deprecated path of finding 2.
	AgentKey = "abuse-agent"
	// MetricsKey is the attacker's ingestion key (metrics.write).
	MetricsKey = "abuse-metrics"
	// OperatorKey is the platform operator's (admin, nodes.admin).
	OperatorKey = "abuse-operator"
	// PlatformOrg is the platform operator's organization.
	PlatformOrg = "abuse-platform"
)

// fixture is the loaded data set and the ids the attacks aim at.
type fixture struct {
	file *dataset.File

	attackerOrg, victimOrg string
	attackerTenant         int
	victimTenant           int
	// attackerOperator holds compute.operate in the attacker's
	// organization (for the event log's ids); victimKey is the victim's.
	attackerOperator, victimKey string

	victimVM   string // running; the victim restarts it
	sharedVM   string // the victim's, running on sharedNode: the agent attack's target
	attackerVM string // the attacker's own, running

	sharedNode     dataset.Node
	metricsPod     models.Pod // the attacker's pod with a day of GPU and CPU series
	attackerPods   []models.Pod
	metricsStart   time.Time
	metricsEnd     time.Time
	metricsGPUs    int
	victimPodCount int
}

// newFixture builds the data set: a small fleet of two tenants (8 nodes
// of 8 GPUs, 200 pods, one VM per node), three VMs running, the
// attacker's extra keys, the platform operator, and 18 metric series on
// one of the attacker's pods.
func newFixture() *fixture {
	f := fleetgen.Generate(fleetgen.Options{Nodes: 8, Pods: 200, Tenants: 2, Seed: 1, VMsPerNode: 1, VMGPUs: 2})
	fx := &fixture{file: f,
		attackerOrg: fleetgen.OrgID(0), victimOrg: fleetgen.OrgID(1),
		attackerTenant: fleetgen.TenantID(0), victimTenant: fleetgen.TenantID(1),
		attackerOperator: fleetgen.Token(0), victimKey: fleetgen.Token(1),
		// VM i of the fleet is organization i % 2's.
		attackerVM: fleetgen.VMID(0, 0), victimVM: fleetgen.VMID(1, 0), sharedVM: fleetgen.VMID(3, 0),
	}
	// Every GPU healthy, so a failed one is the attack's doing.
	for i := range f.Nodes {
		for j := range f.Nodes[i].GPUs {
			f.Nodes[i].GPUs[j].Health, f.Nodes[i].GPUs[j].FailedReason = models.GPUHealthy, nil
		}
	}
	fx.sharedNode = f.Nodes[3]
	for i := range f.VMs {
		v := &f.VMs[i]
		if v.ID != fx.attackerVM && v.ID != fx.victimVM && v.ID != fx.sharedVM {
			continue
		}
		v.Status, v.StatusReason = models.VMRunning, ""
		v.GPUIDs = []string{*v.NodeID + "-g0", *v.NodeID + "-g1"}
	}
	f.Organizations = append(f.Organizations, models.Organization{ID: PlatformOrg, Name: "Platform", TenantID: 9001})
	f.APIKeys = append(f.APIKeys,
		dataset.APIKey{Token: ReaderKey, OrganizationID: fx.attackerOrg, Permissions: []string{"compute.read", "workloads.read"}},
		dataset.APIKey{Token: AgentKey, OrganizationID: fx.attackerOrg, Permissions: []string{"nodes.report"}},
		dataset.APIKey{Token: MetricsKey, OrganizationID: fx.attackerOrg, Permissions: []string{"metrics.write"}},
		dataset.APIKey{Token: OperatorKey, OrganizationID: PlatformOrg, Permissions: []string{"admin", "nodes.admin", "compute.read", "workloads.read"}},
	)
	for _, p := range f.Pods {
		switch p.TenantID {
		case fx.attackerTenant:
			fx.attackerPods = append(fx.attackerPods, p)
			if fx.metricsPod.ID == "" && p.K8sPhase == "Running" {
				fx.metricsPod = p
			}
		case fx.victimTenant:
			fx.victimPodCount++
		}
	}
	// An hour of readings every 15 s on 8 GPUs: utilization and memory
	// per GPU, CPU cores and memory.
	fx.metricsGPUs, fx.metricsEnd = 8, fleetgen.Epoch
	fx.metricsStart = fleetgen.Epoch.Add(-time.Duration(fleetgen.SeriesLength-1) * fleetgen.SampleStep)
	series := func(typ string, gpu int, value func(i int) string) {
		s := podmetrics.MetricSeries{PodID: fx.metricsPod.ID, Type: typ}
		if gpu >= 0 {
			s.Labels = map[string]string{"gpu": strconv.Itoa(gpu)}
		}
		for i := 0; i < fleetgen.SeriesLength; i++ {
			s.Samples = append(s.Samples, [2]string{models.FormatTime(fx.metricsStart.Add(time.Duration(i) * fleetgen.SampleStep)), value(i)})
		}
		f.PodMetrics = append(f.PodMetrics, s)
	}
	for g := 0; g < fx.metricsGPUs; g++ {
		series("GPU_UTILIZATION_PER_GPU", g, func(i int) string { return strconv.Itoa((i*7 + g*13) % 101) })
		series("GPU_MEMORY_USAGE_BYTES_PER_GPU", g, func(i int) string { return strconv.Itoa((i + g) << 30) })
	}
	series("CPU_USAGE_CORES", -1, func(i int) string { return fmt.Sprintf("%d.25", i%64) })
	series("CPU_MEMORY_USAGE_BYTES", -1, func(i int) string { return strconv.Itoa((i % 512) << 30) })
	return fx
}
