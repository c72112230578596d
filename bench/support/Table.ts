/** Percentiles and the markdown tables the benchmarks print. */

/** Nearest-rank percentile of an ascending array. */
export const percentile = (sorted: ReadonlyArray<number>, p: number): number =>
  sorted.length === 0
    ? Number.NaN
    : sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]

export const sortedAsc = (values: ReadonlyArray<number>): Array<number> => [...values].sort((a, b) => a - b)

export const fmt = (n: number, digits = 1) => (Number.isNaN(n) ? "-" : n.toFixed(digits))

export const mib = (bytes: number) => fmt(bytes / 2 ** 20)

/** A markdown table, columns padded; the first column left-aligned, the others right-aligned. */
export const table = (header: ReadonlyArray<string>, rows: ReadonlyArray<ReadonlyArray<string>>): string => {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)))
  const line = (cells: ReadonlyArray<string>) =>
    "| " + cells.map((c, i) => (i < 1 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join(" | ") + " |"
  return [
    line(header),
    "|" + widths.map((w, i) => (i < 1 ? ":" : "-") + "-".repeat(w) + (i < 1 ? "-" : ":")).join("|") + "|",
    ...rows.map(line)
  ]
    .join("\n")
}
