// The tenant's storage against its quota (GET /usage's Storage: what the host measures on disk for the
// storage quota, and the quota's storageBytes), as one horizontal bar in plain SVG like UsageChart's.
// Writes are refused with 507 StorageQuotaExceeded once the bar is full.
const WIDTH = 600;
const HEIGHT = 28;

export function StorageChart({ bytes, quotaBytes }: { bytes: number | null; quotaBytes: number | null }) {
  if (bytes === null || quotaBytes === null) {
    return <p>Storage: not measured now (the tenant's host did not answer); read again later.</p>;
  }
  const share = quotaBytes > 0 ? Math.min(1, bytes / quotaBytes) : 1;
  const percent = Math.round(share * 1000) / 10;
  const summary = `Storage: ${bytes.toLocaleString('en')} bytes of ${quotaBytes.toLocaleString('en')} bytes (${percent}% of the quota)`;
  return (
    <figure className="chart">
      <figcaption>{summary}</figcaption>
      <svg viewBox={`0 0 ${WIDTH} ${HEIGHT}`} role="img" aria-label={summary} preserveAspectRatio="none">
        <rect x="0" y="0" width={WIDTH} height={HEIGHT} fill="none" stroke="#555" />
        <rect x="0" y="0" width={share * WIDTH} height={HEIGHT} fill={share >= 0.9 ? '#a61c00' : '#0b5394'} />
      </svg>
    </figure>
  );
}
