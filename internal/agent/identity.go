package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"gpugraph/internal/agent/agentapi"
)

// reportToken answers the bearer token the agent reports with: the node
// credential kept in cfg.CredentialFile; else the one cfg.BootstrapToken
// is exchanged for (then kept in the file, so a restart needs no new
// bootstrap token); else cfg.Token, an API key (legacy mode servers only).
func reportToken(ctx context.Context, cfg Config) (string, error) {
	if cfg.CredentialFile != "" {
		cred, err := readCredential(cfg.CredentialFile)
		switch {
		case err == nil && cred.NodeName != cfg.NodeName:
			return "", fmt.Errorf("credential file %s holds node %s's credential, not %s's", cfg.CredentialFile, cred.NodeName, cfg.NodeName)
		case err == nil:
			cfg.Log.Info("reporting with the node credential", "file", cfg.CredentialFile)
			return cred.Credential, nil
		case !errors.Is(err, fs.ErrNotExist):
			return "", err
		}
	}
	if cfg.BootstrapToken == "" {
		if cfg.Token == "" {
			return "", fmt.Errorf("credential file %s does not exist and no bootstrap token was given", cfg.CredentialFile)
		}
		cfg.Log.Warn("reporting with an API key (--token), which only a server started with --node-credentials-required=false accepts; enroll the node and pass --bootstrap-token")
		return cfg.Token, nil
	}
	var cred agentapi.RegisterResponse
	err := NewClient(cfg.Server, cfg.BootstrapToken, cfg.HTTPClient).PostJSON(ctx, agentapi.RegisterPath, struct{}{}, &cred)
	if err != nil {
		return "", fmt.Errorf("exchanging the bootstrap token: %w", err)
	}
	if cred.NodeName != cfg.NodeName {
		return "", fmt.Errorf("the bootstrap token was made for node %s, not %s", cred.NodeName, cfg.NodeName)
	}
	if cfg.CredentialFile != "" {
		if err := writeCredential(cfg.CredentialFile, cred); err != nil {
			return "", err
		}
	}
	cfg.Log.Info("exchanged the bootstrap token for a node credential", "cluster", cred.ClusterID, "file", cfg.CredentialFile)
	return cred.Credential, nil
}

func readCredential(path string) (agentapi.RegisterResponse, error) {
	var cred agentapi.RegisterResponse
	b, err := os.ReadFile(path)
	if err != nil {
		return cred, err
	}
	if err := json.Unmarshal(b, &cred); err != nil || cred.Credential == "" {
		return cred, fmt.Errorf("credential file %s is not a node credential (delete it and start with a new --bootstrap-token)", path)
	}
	return cred, nil
}

// writeCredential writes the file owner-only, whole or not at all (a
// temporary file renamed over it).
func writeCredential(path string, cred agentapi.RegisterResponse) error {
	b, err := json.Marshal(cred)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".credential-*")
	if err != nil {
		return fmt.Errorf("keeping the node credential: %w", err)
	}
	defer os.Remove(tmp.Name()) // after the rename, there is nothing to remove
	err = tmp.Chmod(0o600)
	if err == nil {
		_, err = tmp.Write(b)
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		return fmt.Errorf("keeping the node credential in %s: %w", path, err)
	}
	return nil
}
