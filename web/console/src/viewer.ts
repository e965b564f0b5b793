// The key's own credential, organization and permissions (GraphQL's
// viewer). The header greets the user with it; a page asks `can` before it
// offers an action, so a reader's key is not shown buttons the API would
// refuse. The API still decides: a refusal is shown as it words it.
import { useQuery } from '@urql/preact';
import { graphql } from './gql';

const ViewerQuery = graphql(`
  query ConsoleViewer {
    viewer {
      credentialId
      organizationId
      organizationName
      permissions
    }
  }
`);

export function useViewer() {
  const [{ data, error }] = useQuery({ query: ViewerQuery });
  const viewer = data?.viewer;
  return {
    viewer,
    error,
    // can answers false until the viewer is in, so an action appears
    // only once the key is known to hold its permission.
    can: (permission: string) => viewer?.permissions.includes(permission) ?? false,
  };
}
