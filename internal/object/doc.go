// Package object is what every resource that manages one namespaced
// Kubernetes object shares: the name/namespace/labels/annotations
// attributes and their expand/flatten, import IDs, and the create / read /
// update / delete steps over internal/clients/kube (server-side apply with the
// provider's field manager, "already exists" detection, deletion that waits
// until the object is gone), and the parts of a data source reading one
// object (DataSource, Lookup).
//
// Every request error that says the resource is not served is diagnosed
// with one discovery of the resource's group (served.go), so a cluster
// serving only an older version (v1alpha1 on an old GKE add-on) is told
// apart from one without the CRDs, and the message names what was found
// and what is required. Discovery happens only on that error path, never
// while planning and never on a request that works.
//
// Resource is the single-object resource itself: a family (sandbox
// templates, warm pools, sandboxes, claims, network policies) describes
// itself in a Family (kind, schema, Build, Refresh and optional hooks,
// validation and plan modification among them), and the Resource made from
// it holds the CRUD, wait, state and import rules once; DataSource does the
// same for data sources. Families keep their own
// schema, model, spec conversion, validation, plan modification and waits.
//
// Resources that are not one Kubernetes object (the controller's
// installation, the GKE node pool and add-on, the cluster data sources)
// share the framing around their own CRUD from here too (framing.go):
// Configured / ConfiguredDataSource for Configure, Deadline for the
// timeouts block, PlanInputs for ModifyPlan; their data sources are each a
// Query (type, schema, and a Read from configuration to state).
package object
