package kubetest

import "syscall"

// sysProcAttr puts a process in a group of its own and, on Linux, has the
// kernel kill it if the test binary dies without its cleanups (a -timeout
// panic, a SIGKILL), so no etcd or kube-apiserver outlives its test.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
