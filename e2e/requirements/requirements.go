// SPDX-License-Identifier: Apache-2.0

// Package requirements is the list of KEP-5018 requirements the suite checks,
// each with a stable ID that docs/kep-5018.md, report.json and the sign-off
// page share. A spec names its requirement by text (kep("...") in the
// suite), and the suite gives it the ID as a Ginkgo label and a tag in its
// name; the text must be here, so an ID never changes under a reader and a
// requirement no spec ran still shows on the sign-off page, as not run.
//
// IDs are never reused: a requirement that goes keeps its ID retired.
package requirements

import "strings"

// The KEP's pages: its tracking issue, where its milestones and the
// discussion are, and its text.
const (
	KEPIssue  = "https://github.com/kubernetes/enhancements/issues/5018"
	KEPReadme = "https://github.com/kubernetes/enhancements/blob/master/keps/sig-auth/5018-dra-adminaccess/README.md"
)

// Requirement is one promise and its ID.
type Requirement struct {
	ID   string `json:"id"`
	Text string `json:"text"`
}

// All lists every requirement in ID order.
var All = []Requirement{
	{"KEP5018-CLUSTER-01", "a working cluster (prerequisite)"},
	{"KEP5018-CLUSTER-02", "DRA must be served for admin access to exist (prerequisite)"},
	{"KEP5018-AUTHZ-01", "admin access only in namespaces labelled by an admin"},
	{"KEP5018-AUTHZ-02", "admin access only in namespaces labelled by an admin, for every request of a claim or template"},
	{"KEP5018-AUTHZ-03", `only the exact label value "true" authorizes`},
	{"KEP5018-AUTHZ-04", "the label key of the release authorizes (1.34 renamed it)"},
	{"KEP5018-AUTHZ-05", "users who cannot label namespaces cannot obtain admin access"},
	{"KEP5018-AUTHZ-06", "status updates granting admin access are authorized like creates"},
	{"KEP5018-AUTHZ-07", "status updates granting admin access are authorized like creates, for every result"},
	{"KEP5018-AUTHZ-08", "removing the label denies new, keeps existing claims; a granted allocation is never re-checked"},
	{"KEP5018-AUTHZ-09", "adminAccess unset or false asks for no admin access and needs no label"},
	{"KEP5018-AUTHZ-10", "SLO: 100% of unauthorized attempts are denied"},
	{"KEP5018-AUTHZ-11", "adminAccess cannot be set, flipped or dropped after creation: claim and template specs are immutable"},
	{"KEP5018-AUTHZ-12", "a granted allocation cannot be rewritten: status.allocation is immutable once set"},
	{"KEP5018-AUTHZ-13", "a create or an update of the claim itself never stores an allocation: admin access is granted only through the status"},
	{"KEP5018-ALLOC-01", "admin access reaches devices already in use without taking them"},
	{"KEP5018-ALLOC-02", "devices under admin access stay available to ordinary claims"},
	{"KEP5018-ALLOC-03", "allocationMode All with admin access while every device is in use"},
	{"KEP5018-ALLOC-04", "a DaemonSet with admin access monitors devices in use on every node"},
	{"KEP5018-ALLOC-05", "requests asking for adminAccess contribute to the quota"},
	{"KEP5018-ALLOC-06", "the core allocation promises hold under every allocator implementation the release can use"},
	{"KEP5018-ALLOC-07", "admin-access requests for several devices or for all of them contribute to the quota as ordinary ones do"},
	{"KEP5018-ALLOC-08", "within one claim no device is allocated twice, with or without admin access"},
	{"KEP5018-ALLOC-09", "a kube-scheduler that starts while admin-access claims hold devices still gives them to ordinary claims"},
	{"KEP5018-FEATURE-01", "admin access ignores ordinary claims' use of a partitionable device's counters"},
	{"KEP5018-FEATURE-02", "admin access is not exempt from device taints"},
	{"KEP5018-FEATURE-03", "admin access is authorized and allocated per request, beside a prioritized list"},
	{"KEP5018-FEATURE-04", "devices under admin access stay available to pods asking for the class's extended resource"},
	{"KEP5018-FEATURE-05", "admin access ignores ordinary claims' use of a shared device's consumable capacity"},
	{"KEP5018-GATE-01", "an apiserver without the gate drops the field from new objects and keeps it on existing ones"},
	{"KEP5018-GATE-02", "every component checks the gate: an apiserver alone cannot grant admin access"},
	{"KEP5018-GATE-03", "a scheduler without the gate never allocates admin access; re-enabling schedules the waiting pods"},
	{"KEP5018-GATE-04", "the DaemonSet controller tolerates pods that must stay Pending"},
	{"KEP5018-GATE-05", "disabling and re-enabling the feature never breaks running workloads (rollout and rollback)"},
	{"KEP5018-GATE-06", "GA: the gate is locked on and cannot be disabled"},
	{"KEP5018-GATE-07", "upgrade and rollback never break running workloads; from 1.34 the namespace label is resource.kubernetes.io/admin-access"},
	{"KEP5018-GATE-08", "a scheduler without the gate refuses admin access in every shape of claim, for the request that asks, and allocates ordinary ones"},
	{"KEP5018-GATE-09", "a controller-manager without the gate refuses a template whose exact request asks for admin access, and makes the claims of prioritized lists"},
	{"KEP5018-METRICS-01", "resourceclaim_controller_creates_total shows admin access in use"},
	{"KEP5018-METRICS-02", "resourceclaim_controller_creates_total shows failed creations of admin-access claims"},
	{"KEP5018-METRICS-03", "resourceclaim_controller_resource_claims shows admin-access claims and their allocation"},
	{"KEP5018-METRICS-04", "kube-scheduler cannot allocate a claim with admin access: unschedulable_pods counts it under DynamicResources"},
	{"KEP5018-METRICS-05", "metrics stay truthful while the controller cannot serve admin access"},
	{"KEP5018-METRICS-06", "claims kube-scheduler makes for extended resources are counted ordinary, by source"},
	{"KEP5018-DRIVER-01", "drivers publish devices in ResourceSlices (KEP-4381)"},
	{"KEP5018-DRIVER-02", "ordinary claims get exclusive devices, adminAccess false"},
	{"KEP5018-DRIVER-03", "drivers prepare and unprepare allocated claims"},
	{"KEP5018-DRIVER-04", "driver restarts do not lose prepared claims"},
	{"KEP5018-DRIVER-05", "driver configuration errors are reported per claim"},
}

// Of finds a requirement by its text.
func Of(text string) (Requirement, bool) {
	for _, r := range All {
		if r.Text == text {
			return r, true
		}
	}
	return Requirement{}, false
}

// ByID finds a requirement by its ID.
func ByID(id string) (Requirement, bool) {
	for _, r := range All {
		if r.ID == id {
			return r, true
		}
	}
	return Requirement{}, false
}

// NeedsAdminAccess says whether the requirement's specs need the
// DRAAdminAccess gate: all but the prerequisites (CLUSTER) and the driver's
// own contract (DRIVER), which hold, and are checked, without admin access.
func (r Requirement) NeedsAdminAccess() bool {
	return !strings.HasPrefix(r.ID, "KEP5018-CLUSTER-") && !strings.HasPrefix(r.ID, "KEP5018-DRIVER-")
}
