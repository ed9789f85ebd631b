// Package cluster implements the localcluster control plane: credentials,
// configuration, the supervisor that runs every component as a child process
// of the localcluster binary, and the up/down/status commands.
//
// It deliberately imports no Kubernetes server code, only client libraries,
// so its unit tests build in seconds; the heavy server packages live in the
// components package and are linked only into the binary.
package cluster

import (
	"path/filepath"
)

// Layout names every file a cluster keeps in its directory. Everything a
// cluster writes lives below Dir, so `down` plus `rm -rf Dir` leaves nothing.
type Layout struct {
	Dir string // absolute
}

// Kubeconfig is the admin kubeconfig handed to users of the cluster.
func (l Layout) Kubeconfig() string { return filepath.Join(l.Dir, "kubeconfig") }

// TokenFile holds the static admin bearer token (an alternative to the
// client certificate in the kubeconfig).
func (l Layout) TokenFile() string { return filepath.Join(l.Dir, "admin-token") }

// StateFile records ports and options so that the supervisor, `status` and
// `down` need no flags besides --dir.
func (l Layout) StateFile() string { return filepath.Join(l.Dir, "state.json") }

// PKIDir holds certificates, keys and the component kubeconfigs.
func (l Layout) PKIDir() string { return filepath.Join(l.Dir, "pki") }

// PKI returns the path of a file in the pki directory.
func (l Layout) PKI(name string) string { return filepath.Join(l.PKIDir(), name) }

// EtcdDataDir is etcd's data directory.
func (l Layout) EtcdDataDir() string { return filepath.Join(l.Dir, "etcd") }

// KwokDir holds the kwok stages and serves as kwok's HOME so that a
// ~/.kwok/kwok.yaml of the user never leaks into the cluster.
func (l Layout) KwokDir() string { return filepath.Join(l.Dir, "kwok") }

// KwokStages is the kwok configuration file with the stages.
func (l Layout) KwokStages() string { return filepath.Join(l.KwokDir(), "stages.yaml") }

// LogDir holds one log file per component plus supervisor.log.
func (l Layout) LogDir() string { return filepath.Join(l.Dir, "logs") }

// Log returns the log file of a component.
func (l Layout) Log(name string) string { return filepath.Join(l.LogDir(), name+".log") }

// RunDir holds pid files.
func (l Layout) RunDir() string { return filepath.Join(l.Dir, "run") }

// PidFile returns the pid file of a process ("supervisor" or a component).
func (l Layout) PidFile(name string) string { return filepath.Join(l.RunDir(), name+".pid") }

// generated lists the entries `up` owns and replaces when it starts a fresh
// cluster in an existing directory. Anything else in Dir is left alone, so a
// user pointing --dir at a directory with other content loses nothing.
func (l Layout) generated() []string {
	return []string{
		l.Kubeconfig(), l.TokenFile(), l.StateFile(), l.PKIDir(), l.EtcdDataDir(),
		l.KwokDir(), l.LogDir(), l.RunDir(), l.NodeDir(),
	}
}
