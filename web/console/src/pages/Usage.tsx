// A placeholder until the page is built: Balance, burn rate and runway; usage by day and GPU model as a chart, and as CSV.
export function Usage() {
  return (
    <section aria-labelledby="page-title">
      <h1 id="page-title">Usage</h1>
      <p>Balance, burn rate and runway; usage by day and GPU model as a chart, and as CSV.</p>
      <p>Not built yet.</p>
    </section>
  );
}
