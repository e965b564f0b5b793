// The API key is typed once and kept in sessionStorage: it lives as long as
// the tab and never reaches disk the way localStorage would. Nothing of the
// console is written to localStorage.
const slot = 'gpugraph-console-key';

export function storedKey(): string {
  try {
    return sessionStorage.getItem(slot) ?? '';
  } catch {
    return ''; // storage disabled: the key is asked for on each load
  }
}

export function storeKey(key: string): void {
  try {
    if (key) sessionStorage.setItem(slot, key);
    else sessionStorage.removeItem(slot);
  } catch {
    // storage disabled: the key lives in memory for this page only
  }
}

// normalizeKey accepts a key pasted with its "Bearer " prefix or spaces.
export function normalizeKey(typed: string): string {
  return typed.trim().replace(/^bearer\s+/i, '').trim();
}
