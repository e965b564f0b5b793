// A placeholder until the page is built: The Run:ai pods list with its filters and sort; a pod's containers, resources and node, and its metrics as plots.
export function Pods() {
  return (
    <section aria-labelledby="page-title">
      <h1 id="page-title">Pods</h1>
      <p>The Run:ai pods list with its filters and sort; a pod's containers, resources and node, and its metrics as plots.</p>
      <p>Not built yet.</p>
    </section>
  );
}
