// A placeholder until the page is built: Every node as a row of its GPUs, coloured by health and by what holds them; node status, leaving-at, agent version.
export function Fleet() {
  return (
    <section aria-labelledby="page-title">
      <h1 id="page-title">Fleet</h1>
      <p>Every node as a row of its GPUs, coloured by health and by what holds them; node status, leaving-at, agent version.</p>
      <p>Not built yet.</p>
    </section>
  );
}
