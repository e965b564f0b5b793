import type { CombinedError } from '@urql/core';
import { useEffect, useState } from 'preact/hooks';

// ApiError shows an error exactly as the API words it: each GraphQL
// error's message verbatim, its extensions.code, and where the API sets
// extensions.retryAfter (seconds; also sent as Retry-After) a countdown to
// when a retry may succeed. A failure with no GraphQL error (the server
// unreachable) shows the browser's own message. Never re-word a message:
// it names what was wrong (a GPU by address, the stop-and-start hint) in
// the API's contract, and tests compare it with the server's answer.
export function ApiError({ error }: { error: CombinedError }) {
  const errors = error.graphQLErrors;
  return (
    <div class="gg-error" role="alert">
      {errors.length > 0 ? (
        <ul>
          {errors.map((e, i) => (
            <li key={i}>
              <ErrorLine
                message={e.message}
                code={e.extensions?.code}
                retryAfter={e.extensions?.retryAfter}
                requestId={e.extensions?.requestId}
              />
            </li>
          ))}
        </ul>
      ) : (
        <ErrorLine message={error.networkError?.message ?? error.message} />
      )}
    </div>
  );
}

function ErrorLine(p: { message: string; code?: unknown; retryAfter?: unknown; requestId?: unknown }) {
  return (
    <>
      <span class="gg-error-message">{p.message}</span>
      {typeof p.code === 'string' && (
        <>
          {' '}
          <code class="gg-error-code">{p.code}</code>
        </>
      )}
      {typeof p.retryAfter === 'number' && p.retryAfter > 0 && <Countdown seconds={p.retryAfter} />}
      {typeof p.requestId === 'string' && <small class="gg-error-request">request {p.requestId}</small>}
    </>
  );
}

// Countdown counts down from seconds, once a second, from when it is shown.
function Countdown({ seconds }: { seconds: number }) {
  const [until] = useState(() => Date.now() + seconds * 1000);
  const [left, setLeft] = useState(seconds);
  useEffect(() => {
    const tick = () => setLeft(Math.max(0, Math.ceil((until - Date.now()) / 1000)));
    const t = setInterval(tick, 250);
    return () => clearInterval(t);
  }, [until]);
  return (
    <span class="gg-retry" role="timer" data-retry-after={seconds}>
      {left > 0 ? `retry in ${left} s` : 'retry now'}
    </span>
  );
}
