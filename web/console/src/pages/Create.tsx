// A placeholder until the page is built: Create a VM or pod from an instance type: price, capacity per cluster and node pool, the create form, a queued VM's place and reason.
export function Create() {
  return (
    <section aria-labelledby="page-title">
      <h1 id="page-title">Create</h1>
      <p>Create a VM or pod from an instance type: price, capacity per cluster and node pool, the create form, a queued VM's place and reason.</p>
      <p>Not built yet.</p>
    </section>
  );
}
