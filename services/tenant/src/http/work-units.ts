/** Bytes per work unit, read or written. */
export const WORK_UNIT_BYTES = 4096;

/**
 * The work a request did, in units the gateway meters (protocol's WORK_UNITS_HEADER):
 * 1 for the request itself, plus 1 per started 4 KiB of request body read and
 * 1 per started 4 KiB of response body written. Documents are counted through
 * their bytes (a document read or written is read or written as JSON text), so
 * a unit means the same on every route. Queries that scan more than they return
 * are not charged for the scan yet.
 */
export function workUnits(bytesIn: number, bytesOut: number): number {
  return 1 + Math.ceil(bytesIn / WORK_UNIT_BYTES) + Math.ceil(bytesOut / WORK_UNIT_BYTES);
}
