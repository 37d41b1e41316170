/** The JSON line the wrk scripts of bench/wrk print in done(): counts, µs of the run, latency in µs. */
export interface WrkResult {
  requests: number;
  us: number;
  status: number;
  connect: number;
  read: number;
  write: number;
  timeout: number;
  p50: number;
  p99: number;
  max: number;
}
