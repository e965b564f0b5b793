// GraphiQL keeps its tabs, history and favourites in localStorage, and each
// entry carries the headers it ran with, so an API key typed once would stay
// on disk. The playground's decision: headers live in memory only (for the
// page's life), everything else is kept, stripped of its headers.

const NAMESPACE = 'graphiql:';

// Keys whose whole value is headers: never written out.
const memoryOnly = new Set([`${NAMESPACE}headers`]);

// withoutHeaders returns value (a stored JSON string) with every "headers"
// property removed at any depth; a value that is not JSON is kept as is,
// unless it looks like a credential.
export function withoutHeaders(value) {
  let parsed;
  try {
    parsed = JSON.parse(value);
  } catch {
    return /bearer\s/i.test(value) ? null : value;
  }
  return JSON.stringify(strip(parsed));
}

function strip(v) {
  if (Array.isArray(v)) return v.map(strip);
  if (v === null || typeof v !== 'object') return v;
  const out = {};
  for (const [k, x] of Object.entries(v)) {
    if (k !== 'headers') out[k] = strip(x);
  }
  return out;
}

// strippingStorage is the Storage GraphiQL is given: reads see this page's
// own writes in full (so a tab keeps its headers until the page closes),
// while backing (localStorage) only ever receives values without headers.
export function strippingStorage(backing) {
  const memory = new Map();
  const own = () => {
    const keys = new Set(memory.keys());
    for (let i = 0; i < backing.length; i++) {
      const k = backing.key(i);
      if (k && k.startsWith(NAMESPACE)) keys.add(k);
    }
    return keys;
  };
  return {
    getItem(key) {
      return memory.has(key) ? memory.get(key) : backing.getItem(key);
    },
    setItem(key, value) {
      memory.set(key, String(value));
      if (memoryOnly.has(key)) return;
      const kept = withoutHeaders(String(value));
      if (kept === null) backing.removeItem(key);
      else backing.setItem(key, kept);
    },
    removeItem(key) {
      memory.delete(key);
      backing.removeItem(key);
    },
    clear() {
      for (const k of own()) this.removeItem(k);
    },
    get length() {
      return own().size;
    },
  };
}

// scrubStored rewrites what an earlier page may have left in backing: the
// headers-only entries go, the others lose their headers.
export function scrubStored(backing) {
  const keys = [];
  for (let i = 0; i < backing.length; i++) {
    const k = backing.key(i);
    if (k && k.startsWith(NAMESPACE)) keys.push(k);
  }
  for (const k of keys) {
    const v = backing.getItem(k);
    const kept = memoryOnly.has(k) || v === null ? null : withoutHeaders(v);
    if (kept === null) backing.removeItem(k);
    else if (kept !== v) backing.setItem(k, kept);
  }
}
