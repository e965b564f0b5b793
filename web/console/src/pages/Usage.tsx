import { CombinedError } from '@urql/core';
import { useQuery } from '@urql/preact';
import { useMemo, useState } from 'preact/hooks';
import { ApiError } from '../ApiError';
import { graphql } from '../gql';
import { storedKey } from '../key';
import { Plot } from '../Plot';
import './pods.css';

// The organization's money: balance, burn rate and runway; its closed usage
// over a period by day and by GPU model, as charts; its ledger, a page at a
// time; and the usage as CSV, the API's own bytes. A key without
// billing.read (or admin) gets the API's refusal and nothing else.
// One usage window's lines and total, read by day and by GPU model
// (codegen adds the fragment to the documents that spread it).
graphql(`
  fragment ConsoleUsageTotals on Usage {
    from
    to
    total
    lines {
      key
      seconds
      gpuSeconds
      cost
    }
  }
`);

const BillingQuery = graphql(`
  query ConsoleBilling($from: Time!, $to: Time!) {
    organization {
      id
      name
      prepaid
      balance
      burnRatePerHour
      runwayHours
      spendLimitPerHour
      lowBalanceThresholdHours
      byDay: usage(from: $from, to: $to, groupBy: DAY) {
        ...ConsoleUsageTotals
      }
      byModel: usage(from: $from, to: $to, groupBy: GPU_MODEL) {
        ...ConsoleUsageTotals
      }
    }
  }
`);

const LedgerQuery = graphql(`
  query ConsoleLedger($first: Int, $after: String) {
    organization {
      id
      ledger(first: $first, after: $after) {
        nodes {
          id
          kind
          amount
          reason
          createdAt
        }
        pageInfo {
          hasNextPage
          endCursor
        }
      }
    }
  }
`);

const day = 86400_000;
const periods: [string, number][] = [
  ['last 7 days', 7],
  ['last 30 days', 30],
  ['last 90 days', 90],
];

interface Period {
  from: string;
  to: string;
}

// lastDays is the N whole UTC days up to and including today.
function lastDays(n: number): Period {
  const tomorrow = Math.floor(Date.now() / day + 1) * day;
  return { from: new Date(tomorrow - n * day).toISOString(), to: new Date(tomorrow).toISOString() };
}

// Cents as the API writes them (exact, up to six decimals) and in dollars.
const dollars = (cents: number) =>
  `${cents < 0 ? '-' : ''}$${(Math.abs(cents) / 100).toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 })}`;

function Money({ cents, per }: { cents: number; per?: string }) {
  return (
    <>
      {dollars(cents)}
      {per} <small>({String(cents)} ¢{per})</small>
    </>
  );
}

function runway(hours: number): string {
  if (hours < 1) return `${Math.round(hours * 60)} min`;
  if (hours < 48) return `${hours.toFixed(1)} h`;
  return `${(hours / 24).toFixed(1)} days`;
}

export function Usage() {
  const [choice, setChoice] = useState('30');
  const [period, setPeriod] = useState<Period>(() => lastDays(30));
  const [from, setFrom] = useState(() => period.from.slice(0, 10));
  const [to, setTo] = useState(() => new Date(Date.parse(period.to) - day).toISOString().slice(0, 10));
  const [{ data, fetching, error }] = useQuery({ query: BillingQuery, variables: period });
  const org = data?.organization;

  const charts = useMemo(() => {
    if (!org) return null;
    const days = org.byDay.lines;
    const models = org.byModel.lines;
    return {
      byDay: {
        xs: days.map((l) => Date.parse(l.key + 'T12:00:00Z') / 1000),
        series: [{ label: 'cost', values: days.map((l) => l.cost) }],
        // The whole period, each day's bar centred on its day.
        xRange: [Date.parse(org.byDay.from) / 1000, Date.parse(org.byDay.to) / 1000] as [number, number],
        xFormat: (x: number) => new Date(x * 1000).toISOString().slice(0, 10),
      },
      byModel: {
        xs: models.map((_, i) => i),
        xLabels: models.map((l) => l.key || 'no GPU'),
        series: [{ label: 'cost', values: models.map((l) => l.cost) }],
      },
    };
  }, [org]);

  return (
    <section aria-labelledby="page-title" class="gg-usage">
      <h1 id="page-title">Usage</h1>
      {error && <ApiError error={error} />}
      {fetching && !org && <p role="status">Loading the organization's money…</p>}
      {org && !error && (
        <>
          <dl class="gg-figures" aria-label={`${org.name}'s money`}>
            <div>
              <dt>Balance{org.prepaid ? '' : ' (postpaid)'}</dt>
              <dd data-figure="balance" data-cents={String(org.balance)}>
                <Money cents={org.balance} />
              </dd>
            </div>
            <div>
              <dt>Burn rate</dt>
              <dd data-figure="burn" data-cents={String(org.burnRatePerHour)}>
                <Money cents={org.burnRatePerHour} per="/h" />
              </dd>
            </div>
            <div>
              <dt>Runway</dt>
              <dd data-figure="runway" data-hours={org.runwayHours == null ? '' : String(org.runwayHours)}>
                {org.runwayHours == null ? (
                  org.prepaid ? 'nothing burns' : 'postpaid'
                ) : (
                  <>
                    {runway(org.runwayHours)} <small>({String(org.runwayHours)} h)</small>
                  </>
                )}
              </dd>
            </div>
            {org.spendLimitPerHour != null && (
              <div>
                <dt>Spend limit</dt>
                <dd>
                  <Money cents={org.spendLimitPerHour} per="/h" />
                </dd>
              </div>
            )}
          </dl>

          <form
            class="gg-filters"
            aria-label="Usage period"
            onSubmit={(e) => {
              e.preventDefault();
              if (choice !== 'custom') setPeriod(lastDays(Number(choice)));
              else setPeriod({ from: `${from}T00:00:00Z`, to: new Date(Date.parse(`${to}T00:00:00Z`) + day).toISOString() });
            }}
          >
            <label>
              Period
              <select
                name="period"
                value={choice}
                onChange={(e) => {
                  const c = e.currentTarget.value;
                  setChoice(c);
                  if (c !== 'custom') setPeriod(lastDays(Number(c)));
                }}
              >
                {periods.map(([t, n]) => (
                  <option key={n} value={String(n)}>{t}</option>
                ))}
                <option value="custom">custom range</option>
              </select>
            </label>
            {choice === 'custom' && (
              <>
                <label>
                  First day (UTC)
                  <input name="from" type="date" required value={from} onInput={(e) => setFrom(e.currentTarget.value)} />
                </label>
                <label>
                  Last day (UTC)
                  <input name="to" type="date" required value={to} onInput={(e) => setTo(e.currentTarget.value)} />
                </label>
              </>
            )}
            <button type="submit">{choice === 'custom' ? 'Show' : 'Refresh'}</button>
            <p class="gg-help" data-from={org.byDay.from} data-to={org.byDay.to}>
              Closed usage from {org.byDay.from.slice(0, 10)} to {org.byDay.to.slice(0, 10)} (exclusive): {dollars(org.byDay.total)}{' '}
              <small>({String(org.byDay.total)} ¢)</small>. Usage lags the clock by up to a metering interval.
            </p>
          </form>

          {charts && (
            <div class="gg-plots">
              <Plot name="usage-by-day" title="Cost by day (UTC)" {...charts.byDay} format={dollars} bars />
              <Plot name="usage-by-model" title="Cost by GPU model" {...charts.byModel} format={dollars} bars />
            </div>
          )}
          <UsageTable title="By GPU model" keyTitle="GPU model" lines={org.byModel.lines} />
          <Csv period={period} />
          <Ledger />
        </>
      )}
    </section>
  );
}

function UsageTable(p: { title: string; keyTitle: string; lines: { key: string; seconds: number; gpuSeconds: number; cost: number }[] }) {
  return (
    <table class="gg-table">
      <caption>{p.title}</caption>
      <thead>
        <tr>
          <th scope="col">{p.keyTitle}</th>
          <th scope="col">Hours run</th>
          <th scope="col">GPU hours</th>
          <th scope="col">Cost</th>
        </tr>
      </thead>
      <tbody>
        {p.lines.map((l) => (
          <tr key={l.key}>
            <th scope="row">{l.key || 'no GPU'}</th>
            <td>{(l.seconds / 3600).toFixed(2)}</td>
            <td>{(l.gpuSeconds / 3600).toFixed(2)}</td>
            <td><Money cents={l.cost} /></td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

const csvGroups: [string, string][] = [
  ['day', 'day'],
  ['gpuModel', 'GPU model'],
  ['workload', 'workload'],
  ['project', 'project'],
];

// Csv downloads the API's usage CSV (GET /v1/billing/usage with Accept:
// text/csv): the key goes in the Authorization header of a fetch, never in
// a URL, and the answer is saved from a Blob. A refusal shows as the API
// words it ({"error": {"code", "message", "requestId"}}).
function Csv({ period }: { period: Period }) {
  const [group, setGroup] = useState('day');
  const [error, setError] = useState<CombinedError | null>(null);
  const [busy, setBusy] = useState(false);

  const download = async () => {
    setBusy(true);
    setError(null);
    try {
      const q = new URLSearchParams({ from: period.from, to: period.to, groupBy: group });
      const res = await fetch(`/v1/billing/usage?${q}`, {
        headers: { Authorization: `Bearer ${storedKey()}`, Accept: 'text/csv' },
      });
      if (!res.ok) {
        setError(await restError(res));
        return;
      }
      const url = URL.createObjectURL(await res.blob());
      const a = document.createElement('a');
      a.href = url;
      a.download = `usage-by-${group}-${period.from.slice(0, 10)}-${period.to.slice(0, 10)}.csv`;
      document.body.append(a);
      a.click();
      a.remove();
      setTimeout(() => URL.revokeObjectURL(url), 10_000);
    } catch (e) {
      setError(new CombinedError({ networkError: e as Error }));
    } finally {
      setBusy(false);
    }
  };

  return (
    <div class="gg-filters gg-csv">
      <label>
        CSV lines by
        <select name="csvGroup" value={group} onChange={(e) => setGroup(e.currentTarget.value)}>
          {csvGroups.map(([v, t]) => (
            <option key={v} value={v}>{t}</option>
          ))}
        </select>
      </label>
      <button type="button" onClick={download} disabled={busy}>
        Download CSV
      </button>
      {error && <ApiError error={error} />}
    </div>
  );
}

// restError turns a REST refusal into the error ApiError shows: the
// API's message and code as they are, and Retry-After as its countdown.
async function restError(res: Response): Promise<CombinedError> {
  let body: { error?: { code?: string; message?: string; requestId?: string } } = {};
  try {
    body = await res.json();
  } catch {
    // not JSON: the status line below says what happened
  }
  const e = body.error;
  const retry = Number(res.headers.get('Retry-After'));
  if (!e?.message) return new CombinedError({ networkError: new Error(`${res.status} ${res.statusText}`), response: res });
  return new CombinedError({
    graphQLErrors: [{ message: e.message, extensions: { code: e.code, requestId: e.requestId, retryAfter: retry > 0 ? retry : undefined } }],
    response: res,
  });
}

const kinds: Record<string, string> = { CREDIT: 'credit', USAGE: 'usage', ADJUSTMENT: 'adjustment' };

// Ledger pages the ledger, oldest first, 20 entries a page; Previous goes
// back through the cursors it came by.
function Ledger() {
  const [cursors, setCursors] = useState<(string | null)[]>([null]);
  const after = cursors[cursors.length - 1];
  const [{ data, error }] = useQuery({ query: LedgerQuery, variables: { first: 20, after } });
  const ledger = data?.organization.ledger;
  const page = cursors.length;
  return (
    <section class="gg-ledger" aria-labelledby="gg-ledger-title">
      <h2 id="gg-ledger-title">Ledger</h2>
      {error && <ApiError error={error} />}
      {ledger && (
        <>
          <table class="gg-table">
            <caption>Page {page}, oldest first</caption>
            <thead>
              <tr>
                <th scope="col">#</th>
                <th scope="col">When</th>
                <th scope="col">Kind</th>
                <th scope="col">Amount</th>
                <th scope="col">Reason</th>
              </tr>
            </thead>
            <tbody>
              {ledger.nodes.map((e) => (
                <tr key={e.id}>
                  <td>{e.id}</td>
                  <td>{e.createdAt.replace('T', ' ').replace(/\.\d+/, '').replace('Z', ' UTC')}</td>
                  <td>{kinds[e.kind] ?? e.kind}</td>
                  <td><Money cents={e.amount} /></td>
                  <td>{e.reason}</td>
                </tr>
              ))}
            </tbody>
          </table>
          <nav class="gg-pager" aria-label="Pages of the ledger">
            <button type="button" disabled={page === 1} onClick={() => setCursors(cursors.slice(0, -1))}>
              Previous
            </button>
            <button
              type="button"
              disabled={!ledger.pageInfo.hasNextPage || !ledger.pageInfo.endCursor}
              onClick={() => setCursors([...cursors, ledger.pageInfo.endCursor!])}
            >
              Next
            </button>
          </nav>
        </>
      )}
    </section>
  );
}
