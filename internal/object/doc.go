// Package object is what every resource that manages one namespaced
// Kubernetes object shares: the name/namespace/labels/annotations
// attributes and their expand/flatten, import IDs, and the create / read /
// update / delete steps over internal/kube (server-side apply with the
// provider's field manager, "already exists" detection, deletion that waits
// until the object is gone).
//
// Resource families (sandbox templates, warm pools, sandboxes, claims,
// network policies) keep their own schema, model and spec conversion and
// call into this package for the parts that must behave identically
// everywhere.
package object
