package compute

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/base64"
	"strings"
	"testing"

	"golang.org/x/crypto/ssh"
)

// sshString is s in the SSH wire format: a 32-bit length, then s.
func sshString(s []byte) []byte {
	n := len(s)
	return append([]byte{byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)}, s...)
}

// Every key type of sshKeyTypes is taken (the security-key ones built
// from their wire format, as ssh-keygen -t ed25519-sk writes them), and
// the types left out (DSA, certificates) are refused by their first word.
func TestSSHKeyTypes(t *testing.T) {
	var keys []string
	for _, c := range []elliptic.Curve{elliptic.P256(), elliptic.P384(), elliptic.P521()} {
		k, err := ecdsa.GenerateKey(c, rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		pub, err := ssh.NewPublicKey(&k.PublicKey)
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, strings.TrimSpace(string(ssh.MarshalAuthorizedKey(pub))))
	}
	edPub, _, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	sk := append(append(sshString([]byte(ssh.KeyAlgoSKED25519)), sshString(edPub)...), sshString([]byte("ssh:"))...)
	keys = append(keys, ssh.KeyAlgoSKED25519+" "+base64.StdEncoding.EncodeToString(sk)+" yubikey")
	got, err := checkSSHKeys(keys)
	if err != nil || len(got) != len(keys) {
		t.Fatalf("ECDSA P-256/384/521 and sk-ssh-ed25519: %v", err)
	}
	ed, err := ssh.NewPublicKey(edPub)
	if err != nil {
		t.Fatal(err)
	}
	blob := strings.Fields(string(ssh.MarshalAuthorizedKey(ed)))[1]
	for _, typ := range []string{"ssh-dss", "ssh-ed25519-cert-v01@openssh.com", "cert-authority"} {
		if _, err := checkSSHKeys([]string{typ + " " + blob}); err == nil ||
			!strings.HasPrefix(err.Error(), "sshPublicKeys[0] does not start with a key type this platform takes") {
			t.Errorf("%s: %v, want refused by its type", typ, err)
		}
	}
	if _, err := checkSSHKeys([]string{"ssh-ed25519 " + blob + " a\x07bell"}); err == nil || err.Error() != "sshPublicKeys[0] holds a control character" {
		t.Errorf("a control character: %v", err)
	}
}
