// Package kubetest starts a real kube-apiserver backed by a real etcd for a
// test: both on loopback ports, with their data, certificates and logs in
// the test's temporary directory, stopped (their whole process groups) when
// the test ends. No kubelet, scheduler or controller-manager runs: a test
// binds a Pod by giving it a nodeName, writes its status through the status
// subresource as a kubelet would, and deletes it with grace period 0 (a
// graceful delete of a bound pod waits for a kubelet forever).
//
// The two binaries are built from the wrapper modules in test/kube/ by
// test/kube/build.sh, outside the repository and outside the product's
// go.mod, into a cache directory keyed by the wrappers' go.sum files (see
// Dir). A test without them is skipped, loudly, naming the command that
// builds them; GPUGRAPH_REQUIRE_KUBE=1 (CI) makes that a failure.
package kubetest

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// RequireEnv, set to 1 (CI sets it), turns missing binaries into a failure
// instead of a skip.
const RequireEnv = "GPUGRAPH_REQUIRE_KUBE"

// DirEnv names another directory to keep the builds in instead of
// gpugraph-kube under the user cache directory; build.sh reads it too.
const DirEnv = "GPUGRAPH_KUBE_DIR"

// BuildCommand is what a missing build's message tells the reader to run,
// relative to the repository root.
const BuildCommand = "test/kube/build.sh"

// Bounds on waiting for a process to answer. kube-apiserver is ready in
// about 4 s on an idle machine; the bounds leave room for a loaded one
// and only cut a start-up that has gone wrong.
const (
	etcdReadyWithin      = 60 * time.Second
	apiserverReadyWithin = 3 * time.Minute
	stopWithin           = 10 * time.Second
)

// startAttempts is how many sets of free ports a start tries: a port found
// free can be taken by another process before etcd or kube-apiserver binds
// it, which shows as "address already in use" and a fresh set.
const startAttempts = 3

// Cluster is a running kube-apiserver and its etcd.
type Cluster struct {
	// Config is an admin's (system:masters) client configuration: bearer
	// token, and the serving certificate's CA to verify the server with.
	// Copy it (rest.CopyConfig) before changing it.
	Config *rest.Config
	// Kubeconfig is a file holding the same configuration, for a binary
	// that takes --kubeconfig.
	Kubeconfig string
	// Host is the server's https URL; Token the admin's bearer token.
	Host, Token string
	// EtcdLog and APIServerLog are the processes' output files.
	EtcdLog, APIServerLog string

	// EtcdURL is etcd's client URL.
	EtcdURL string

	etcd, apiserver *process
	// apiserverArgs and bins start kube-apiserver again (RestartAPIServer).
	apiserverArgs  []string
	dir, bins      string
	apiserverReady func() error
}

// Start starts etcd and kube-apiserver for t and stops both when t ends.
// Without the binaries t is skipped (failed where GPUGRAPH_REQUIRE_KUBE=1).
func Start(t testing.TB) *Cluster {
	t.Helper()
	dir, err := Dir()
	if err == nil {
		err = present(dir)
	}
	if err != nil {
		msg := "kube-apiserver tests NOT RUN (" + err.Error() + "): build them with " + BuildCommand + " (20 to 50 minutes the first time, a moment after)"
		if os.Getenv(RequireEnv) == "1" {
			t.Fatal(msg + "; " + RequireEnv + "=1 makes this a failure")
		}
		t.Log("\n\n*** " + msg + " ***\n")
		t.Skip(msg)
	}
	c, err := start(t.TempDir(), dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("etcd's log ends:\n%s\nkube-apiserver's log ends:\n%s", tail(c.EtcdLog), tail(c.APIServerLog))
		}
		c.stop()
	})
	return c
}

// ErrNotBuilt is StartIn's error where the binaries are not built.
var ErrNotBuilt = errors.New("kube-apiserver and etcd are not built")

// StartIn starts etcd and kube-apiserver with their data, certificates
// and logs under work, for a program that is not a test (benchreport's
// cluster figure); Stop ends them. Without the binaries it answers
// ErrNotBuilt, naming the command that builds them.
func StartIn(work string) (*Cluster, error) {
	dir, err := Dir()
	if err == nil {
		err = present(dir)
	}
	if err != nil {
		return nil, fmt.Errorf("%w (%v): build them with %s (20 to 50 minutes the first time, a moment after)", ErrNotBuilt, err, BuildCommand)
	}
	return start(work, dir)
}

// Stop ends kube-apiserver, then etcd (what Start's cleanup does).
func (c *Cluster) Stop() { c.stop() }

// Dir is the directory build.sh builds the binaries of this checkout's
// wrappers into: $GPUGRAPH_KUBE_DIR, else gpugraph-kube under the user
// cache directory, then the SHA-256 of test/kube/apiserver/go.sum followed
// by test/kube/etcd/go.sum, so a version change builds afresh beside the
// old one. It finds the wrappers from the working directory up.
func Dir() (string, error) {
	kube, err := wrappers()
	if err != nil {
		return "", err
	}
	sum := sha256.New()
	for _, m := range []string{"apiserver", "etcd"} {
		b, err := os.ReadFile(filepath.Join(kube, m, "go.sum"))
		if err != nil {
			return "", err
		}
		sum.Write(b)
	}
	root := os.Getenv(DirEnv)
	if root == "" {
		cache, err := os.UserCacheDir()
		if err != nil {
			return "", err
		}
		root = filepath.Join(cache, "gpugraph-kube")
	}
	return filepath.Join(root, hex.EncodeToString(sum.Sum(nil))), nil
}

// wrappers is the repository's test/kube directory: a test's working
// directory is its package's, somewhere under the repository root.
func wrappers() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := wd; ; d = filepath.Dir(d) {
		kube := filepath.Join(d, "test", "kube")
		if _, err := os.Stat(filepath.Join(kube, "build.sh")); err == nil {
			return kube, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("no test/kube/build.sh above %s", wd)
		}
	}
}

func present(dir string) error {
	for _, b := range []string{"etcd", "kube-apiserver"} {
		if _, err := os.Stat(filepath.Join(dir, b)); err != nil {
			return fmt.Errorf("%s is not built for these wrappers: no %s", b, filepath.Join(dir, b))
		}
	}
	return nil
}

// start runs both processes under work, trying fresh ports where one was
// taken in between.
func start(work, bins string) (*Cluster, error) {
	files, err := writeCredentials(work)
	if err != nil {
		return nil, err
	}
	var last error
	for attempt := 1; attempt <= startAttempts; attempt++ {
		dir := filepath.Join(work, "attempt-"+strconv.Itoa(attempt))
		c, err := startOnce(dir, bins, files)
		if err == nil {
			return c, nil
		}
		last = err
		if !errors.Is(err, errPortTaken) {
			break
		}
	}
	return nil, last
}

// credentials are the files kube-apiserver authenticates with.
type credentials struct {
	token, tokenFile, saKey, saPub string
}

// writeCredentials writes the admin's token file and the service-account
// signing key (ECDSA P-256: kube-apiserver signs ES256 with it, and it is
// generated in microseconds where an RSA key takes a noticeable moment).
func writeCredentials(dir string) (credentials, error) {
	raw := make([]byte, 32)
	if _, err := rand.Read(raw); err != nil {
		return credentials{}, err
	}
	c := credentials{
		token:     hex.EncodeToString(raw),
		tokenFile: filepath.Join(dir, "tokens.csv"),
		saKey:     filepath.Join(dir, "sa.key"),
		saPub:     filepath.Join(dir, "sa.pub"),
	}
	// token,user,uid,"group,…": system:masters passes every authorization.
	line := c.token + ",gpugraph-test-admin,gpugraph-test-admin,system:masters\n"
	if err := os.WriteFile(c.tokenFile, []byte(line), 0o600); err != nil {
		return credentials{}, err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return credentials{}, err
	}
	der, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return credentials{}, err
	}
	pub, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		return credentials{}, err
	}
	if err := os.WriteFile(c.saKey, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der}), 0o600); err != nil {
		return credentials{}, err
	}
	if err := os.WriteFile(c.saPub, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub}), 0o600); err != nil {
		return credentials{}, err
	}
	return c, nil
}

var errPortTaken = errors.New("a port was taken before the process bound it")

func startOnce(dir, bins string, cred credentials) (*Cluster, error) {
	if err := os.MkdirAll(filepath.Join(dir, "certs"), 0o700); err != nil {
		return nil, err
	}
	ports, err := freePorts(3)
	if err != nil {
		return nil, err
	}
	clientURL := "http://127.0.0.1:" + strconv.Itoa(ports[0])
	peerURL := "http://127.0.0.1:" + strconv.Itoa(ports[1])
	c := &Cluster{
		Host:         "https://127.0.0.1:" + strconv.Itoa(ports[2]),
		Token:        cred.token,
		EtcdLog:      filepath.Join(dir, "etcd.log"),
		APIServerLog: filepath.Join(dir, "kube-apiserver.log"),
	}

	c.etcd, err = startProcess("etcd", c.EtcdLog, dir, filepath.Join(bins, "etcd"),
		"--name=default",
		"--data-dir="+filepath.Join(dir, "etcd"),
		"--listen-client-urls="+clientURL, "--advertise-client-urls="+clientURL,
		"--listen-peer-urls="+peerURL, "--initial-advertise-peer-urls="+peerURL,
		"--initial-cluster=default="+peerURL,
		// A test's etcd holds nothing worth a disk flush, and fsync is most
		// of a write's time on a loaded disk.
		"--unsafe-no-fsync",
		"--log-level=warn",
	)
	if err != nil {
		return nil, err
	}
	plain := &http.Client{Timeout: 5 * time.Second}
	if err := c.etcd.waitReady(etcdReadyWithin, func() error { return etcdHealthy(plain, clientURL) }); err != nil {
		c.stop()
		return nil, err
	}

	certDir := filepath.Join(dir, "certs")
	c.EtcdURL, c.dir, c.bins = clientURL, dir, bins
	c.apiserverArgs = []string{
		"--etcd-servers=" + clientURL,
		// A loopback advertise address is refused unless no endpoint
		// reconciler publishes it as the kubernetes Service's endpoint.
		"--bind-address=127.0.0.1", "--advertise-address=127.0.0.1", "--endpoint-reconciler-type=none",
		"--secure-port=" + strconv.Itoa(ports[2]),
		// It makes its own serving certificate (and the CA that signed it)
		// there; the client verifies the server with that CA.
		"--cert-dir=" + certDir,
		"--token-auth-file=" + cred.tokenFile,
		"--authorization-mode=RBAC",
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file=" + cred.saPub,
		"--service-account-signing-key-file=" + cred.saKey,
		"--service-cluster-ip-range=10.96.0.0/16",
		// No controller-manager makes a namespace's default service
		// account, which the admission plugin would wait for on every Pod.
		"--disable-admission-plugins=ServiceAccount",
		"--profiling=false",
	}
	c.apiserver, err = startProcess("kube-apiserver", c.APIServerLog, dir, filepath.Join(bins, "kube-apiserver"), c.apiserverArgs...)
	if err != nil {
		c.stop()
		return nil, err
	}
	certFile := filepath.Join(certDir, "apiserver.crt")
	var client *http.Client
	c.apiserverReady = func() error {
		if client == nil {
			ca, err := os.ReadFile(certFile)
			if err != nil || !bytes.Contains(ca, []byte("END CERTIFICATE")) {
				return fmt.Errorf("no serving certificate in %s yet", certDir)
			}
			client, err = caClient(ca)
			if err != nil {
				return err
			}
			c.Config = &rest.Config{Host: c.Host, BearerToken: c.Token, TLSClientConfig: rest.TLSClientConfig{CAData: ca}}
		}
		return readyz(client, c.Host, c.Token)
	}
	err = c.apiserver.waitReady(apiserverReadyWithin, c.apiserverReady)
	if err != nil {
		c.stop()
		return nil, err
	}
	c.Kubeconfig = filepath.Join(dir, "kubeconfig")
	if err := WriteKubeconfig(c.Kubeconfig, c.Config); err != nil {
		c.stop()
		return nil, err
	}
	return c, nil
}

// freePorts answers n distinct loopback ports free now: all n are held
// open together so none is answered twice.
func freePorts(n int) ([]int, error) {
	var ports []int
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		defer l.Close()
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

func etcdHealthy(c *http.Client, clientURL string) error {
	resp, err := c.Get(clientURL + "/health")
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if resp.StatusCode != http.StatusOK || !bytes.Contains(b, []byte(`"health":"true"`)) {
		return fmt.Errorf("etcd /health: %d %s", resp.StatusCode, b)
	}
	return nil
}

// caClient trusts only the certificates of the server's certificate file
// (its serving certificate, then the CA kube-apiserver signed it with).
func caClient(pemCerts []byte) (*http.Client, error) {
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pemCerts) {
		return nil, errors.New("kube-apiserver's certificate file holds no certificate")
	}
	return &http.Client{
		Timeout:   5 * time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}},
	}, nil
}

func readyz(c *http.Client, host, token string) error {
	req, err := http.NewRequest(http.MethodGet, host+"/readyz", nil)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		return fmt.Errorf("/readyz: %d %s", resp.StatusCode, b)
	}
	return nil
}

// WriteKubeconfig writes cfg (a copy of Config, perhaps another host) as a
// kubeconfig file at path, for a binary that takes --kubeconfig.
func WriteKubeconfig(path string, cfg *rest.Config) error {
	kc := clientcmdapi.NewConfig()
	kc.Clusters["kubetest"] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData}
	kc.AuthInfos["kubetest-admin"] = &clientcmdapi.AuthInfo{Token: cfg.BearerToken}
	kc.Contexts["kubetest"] = &clientcmdapi.Context{Cluster: "kubetest", AuthInfo: "kubetest-admin"}
	kc.CurrentContext = "kubetest"
	return clientcmd.WriteToFile(*kc, path)
}

// RestartAPIServer stops kube-apiserver and starts it again on the same
// port and etcd, and waits until it is ready: its watch cache starts
// afresh, so a watch resumed from a resource version before the restart
// (and before a CompactEtcd) is too old, 410 Gone, and its client lists
// again.
func (c *Cluster) RestartAPIServer() error {
	c.apiserver.stop()
	p, err := startProcess("kube-apiserver", c.APIServerLog+".restarted", c.dir, filepath.Join(c.bins, "kube-apiserver"), c.apiserverArgs...)
	if err != nil {
		return err
	}
	c.apiserver, c.APIServerLog = p, c.APIServerLog+".restarted"
	return p.waitReady(apiserverReadyWithin, c.apiserverReady)
}

// CompactEtcd compacts etcd's history up to its current revision (through
// its JSON gateway), so that no watch can resume from before now.
func (c *Cluster) CompactEtcd() error {
	client := &http.Client{Timeout: 10 * time.Second}
	post := func(path, body string, out any) error {
		resp, err := client.Post(c.EtcdURL+path, "application/json", strings.NewReader(body))
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("etcd %s: %d %s", path, resp.StatusCode, b)
		}
		if out != nil {
			return json.Unmarshal(b, out)
		}
		return nil
	}
	var r struct {
		Header struct {
			Revision string `json:"revision"`
		} `json:"header"`
	}
	if err := post("/v3/kv/range", `{"key": "AA=="}`, &r); err != nil {
		return err
	}
	return post("/v3/kv/compaction", `{"revision": "`+r.Header.Revision+`", "physical": true}`, nil)
}

// stop ends kube-apiserver, then etcd.
func (c *Cluster) stop() {
	if c.apiserver != nil {
		c.apiserver.stop()
	}
	if c.etcd != nil {
		c.etcd.stop()
	}
}

// process is a started binary, in a process group of its own so stopping
// it ends whatever it started too.
type process struct {
	name, log string
	cmd       *exec.Cmd
	done      chan struct{}
}

func startProcess(name, logPath, dir, bin string, args ...string) (*process, error) {
	out, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, args...)
	cmd.Dir, cmd.Stdout, cmd.Stderr = dir, out, out
	cmd.SysProcAttr = sysProcAttr()
	if err := cmd.Start(); err != nil {
		out.Close()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	p := &process{name: name, log: logPath, cmd: cmd, done: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		out.Close()
		close(p.done)
	}()
	return p, nil
}

// waitReady polls ready every 100 ms until it answers nil, the process
// exits (errPortTaken when its log says a port was in use), or within
// passes.
func (p *process) waitReady(within time.Duration, ready func() error) error {
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	for {
		err := ready()
		if err == nil {
			return nil
		}
		select {
		case <-p.done:
			log := tail(p.log)
			if strings.Contains(log, "address already in use") {
				return fmt.Errorf("%s: %w: %s", p.name, errPortTaken, log)
			}
			return fmt.Errorf("%s exited before it was ready (%v); its log ends:\n%s", p.name, p.cmd.ProcessState, log)
		case <-ctx.Done():
			return fmt.Errorf("%s was not ready within %s (%v); its log ends:\n%s", p.name, within, err, tail(p.log))
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// stop signals the process group to terminate, kills it if it has not
// exited within stopWithin, and kills what is left of the group either way.
func (p *process) stop() {
	pgid := p.cmd.Process.Pid
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(stopWithin):
	}
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	<-p.done
}

// tail is the end of a log file, for a message.
func tail(path string) string {
	b, _ := os.ReadFile(path)
	if len(b) > 4000 {
		b = b[len(b)-4000:]
	}
	return string(b)
}
