/**
 * Which workloads a bench script runs: the names listed, comma-separated, in an environment
 * variable (`BENCH_ONLY=throughput,replay1000MessagesMs`), or all of them when it is unset or empty.
 */
interface BenchSelection {
  /** The names listed (empty: none listed, everything runs). */
  names: string[];
  /** Whether the workload of this name runs. */
  want: (name: string) => boolean;
}

export function benchSelection(variable: string): BenchSelection {
  const names = (process.env[variable] ?? '')
    .split(',')
    .map((x) => x.trim())
    .filter(Boolean);
  return { names, want: (name) => names.length === 0 || names.includes(name) };
}
