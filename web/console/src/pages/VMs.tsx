import { useQuery } from '@urql/preact';
import { graphql } from '../gql';
import { ApiError } from '../ApiError';

// The organization's VMs, newest first: a minimal list the real page
// (live through vmEvents, filters, actions) replaces.
const VmsQuery = graphql(`
  query ConsoleVms {
    vms(limit: 50) {
      total
      vms {
        id
        name
        status
      }
    }
  }
`);

export function VMs() {
  const [{ data, fetching, error }] = useQuery({ query: VmsQuery });
  return (
    <section aria-labelledby="page-title">
      <h1 id="page-title">VMs</h1>
      {error && <ApiError error={error} />}
      {fetching && !data && <p role="status">Loading VMs…</p>}
      {data && (
        <table class="gg-table">
          <caption>{data.vms.total} VMs and pods of this organization</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Status</th>
              <th scope="col">ID</th>
            </tr>
          </thead>
          <tbody>
            {data.vms.vms.map((vm) => (
              <tr key={vm.id}>
                <td>{vm.name}</td>
                <td>{vm.status.toLowerCase()}</td>
                <td><code>{vm.id}</code></td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
