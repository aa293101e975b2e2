// SPDX-License-Identifier: Apache-2.0

package release

// The metric names and labels of each release that the metrics specs read.

// Metrics names the kube-controller-manager metrics of the resourceclaim
// controller in one release (pkg/controller/resourceclaim/metrics/metrics.go).
type Metrics struct {
	// CreatesTotal counts ResourceClaim creations from templates. Labelled
	// (status, admin_access) from 1.34; before that it counts attempts with no labels.
	CreatesTotal string
	// CreateFailures is the separate failure counter of releases without labels.
	CreateFailures string
	// ResourceClaims is the gauge of existing claims.
	ResourceClaims string
	// AllocatedResourceClaims is the separate allocated gauge of releases without labels.
	AllocatedResourceClaims string
	// Labelled is true when the counters and gauge carry admin_access labels.
	Labelled bool
	// SourceLabel is true when resource_claims carries the `source` label.
	SourceLabel bool
	// SchedulerPending and SchedulerUnschedulable are the kube-scheduler gauges the KEP names.
	SchedulerPending       string
	SchedulerUnschedulable string
	// UnschedulableForgetsDeleted is true where deleting a pod that waits as
	// unschedulable also takes it out of SchedulerUnschedulable{plugin}.
	// Before 1.36 only a new scheduling attempt did (active_queue.go), so the
	// gauge kept counting deleted pods; 1.36 added the decrement to
	// PriorityQueue.Delete (pkg/scheduler/backend/queue/scheduling_queue.go).
	UnschedulableForgetsDeleted bool
	// Retired are the earlier releases' names this release no longer
	// serves: a scrape must not have them.
	Retired []string
	// Owner labels the creation counter with the claim's owner (1.37:
	// owner_api_group, owner_api_kind: "", "Pod" for a pod's claims).
	OwnerLabels bool
	// SchedulerCreates is kube-scheduler's counter of the claims it
	// creates for a pod's extended resources, registered where
	// DRAExtendedResource is on; "" where kube-scheduler has none (1.33,
	// and 1.34, whose DynamicResources plugin creates the claim uncounted).
	// 1.35 and 1.36: scheduler_resourceclaim_creates_total{status}
	// (pkg/scheduler/metrics/metrics.go:425 at v1.35.4, :466 at v1.36.3),
	// incremented by createExtendedResourceClaimInAPI after its create
	// call (extendeddynamicresources.go:553-556 at v1.35.4, :550-553 at
	// v1.36.3). 1.37: kube-controller-manager's own counter, the same
	// name and labels (ResourceClaimCreatesTotal =
	// resourceclaimmetrics.ResourceClaimCreate, metrics.go:189 at v1.37.2),
	// which the plugin counts as status, "false", "", "Pod"
	// (extendeddynamicresources.go:551-554).
	SchedulerCreates string
	// SchedulerCreatesLabelled: SchedulerCreates carries admin_access and
	// the owner labels (1.37), not only status.
	SchedulerCreatesLabelled bool
}

var metricsUnlabelled = Metrics{
	CreatesTotal:            "resourceclaim_controller_create_attempts_total",
	CreateFailures:          "resourceclaim_controller_create_failures_total",
	ResourceClaims:          "resourceclaim_controller_resource_claims",
	AllocatedResourceClaims: "resourceclaim_controller_allocated_resource_claims",
	SchedulerPending:        "scheduler_pending_pods",
	SchedulerUnschedulable:  "scheduler_unschedulable_pods",
}

var metricsLabelled = Metrics{
	CreatesTotal:           "resourceclaim_controller_creates_total",
	ResourceClaims:         "resourceclaim_controller_resource_claims",
	Labelled:               true,
	SchedulerPending:       "scheduler_pending_pods",
	SchedulerUnschedulable: "scheduler_unschedulable_pods",
}

func withSource(m Metrics) Metrics { m.SourceLabel = true; return m }

func forgettingDeleted(m Metrics) Metrics { m.UnschedulableForgetsDeleted = true; return m }

// countingSchedulerCreates is 1.35's and 1.36's kube-scheduler counter of
// the claims it makes for extended resources (Metrics.SchedulerCreates).
func countingSchedulerCreates(m Metrics) Metrics {
	m.SchedulerCreates = "scheduler_resourceclaim_creates_total"
	return m
}

// metricsDRA are 1.37's names: kube-controller-manager's claim metrics moved to
// the dynamic_resource_allocation subsystem (the counter into
// k8s.io/dynamic-resource-allocation/resourceclaim/metrics, the gauge in
// pkg/controller/resourceclaim/metrics), with the same status, admin_access,
// allocated and source labels, and the counter gained owner labels.
var metricsDRA = Metrics{
	CreatesTotal:                "dynamic_resource_allocation_resourceclaim_creates_total",
	ResourceClaims:              "dynamic_resource_allocation_resource_claims",
	Labelled:                    true,
	SourceLabel:                 true,
	OwnerLabels:                 true,
	SchedulerCreates:            "dynamic_resource_allocation_resourceclaim_creates_total",
	SchedulerCreatesLabelled:    true,
	SchedulerPending:            "scheduler_pending_pods",
	SchedulerUnschedulable:      "scheduler_unschedulable_pods",
	UnschedulableForgetsDeleted: true,
	Retired:                     []string{"resourceclaim_controller_creates_total", "resourceclaim_controller_resource_claims"},
}
