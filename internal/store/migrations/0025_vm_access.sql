-- Reaching a VM (docs/decisions/0044-vm-access-and-console.md).
-- The OpenSSH public keys its create carried, in the order given, which
-- the node hands to the guest's cloud-init on every run: a VM's keys are
-- written with its row and never change.
CREATE TABLE IF NOT EXISTS vm_ssh_keys (
  vm_id       {{text}} NOT NULL,
  position    integer  NOT NULL,
  public_key  {{text}} NOT NULL,
  PRIMARY KEY (vm_id, position)
);

-- The last bytes of a VM's serial console its node pushed (at most
-- 64 KiB: each push replaces the row), so every replica answers
-- GET /v1/vms/{id}/console the same; node_id is the node that pushed it.
CREATE TABLE IF NOT EXISTS vm_consoles (
  vm_id        {{text}}  PRIMARY KEY,
  node_id      {{text}}  NOT NULL,
  output       {{bytes}} NOT NULL,
  captured_at  {{time}}  NOT NULL
);
