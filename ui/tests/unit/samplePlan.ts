// A small plan for the tests: valid against the bundled catalog, and showing
// the three things a plan is made of (blocks, inputs, references between nodes).

export const SAMPLE_PLAN = `apiVersion: v1
id: invoice_review
version: 0.1.0
policy:
  on_error: stop
graph:
  - id: read_invoices
    block: csv.read
    in:
      path: input/invoices.csv
      encoding: auto
    out:
      rows: invoices
  - id: large_invoices
    block: transforms.filter_rows
    in:
      rows: "\${read_invoices.invoices}"
      condition: 金額 >= 100000
    out:
      rows: large
  - id: save_large
    block: csv.write
    in:
      rows: "\${large_invoices.large}"
      out_name: large_invoices.csv
`;
