// Every result of the query (not one page), streamed through the stream API (export.ts): straight into a
// file the person picks where the browser has the File System Access API (showSaveFilePicker: Chromium,
// Edge), otherwise into Blob parts offered as a download once the stream ended whole (at most
// EXPORT_ROW_CAP rows).
import { useEffect, useState } from 'react';
import { describeError } from '../api.js';
import {
  blobSink,
  EXPORT_ROW_CAP,
  type ExportFormat,
  exportRows,
  fileSink,
  openQueryStream,
} from './export.js';

const TYPES: Record<ExportFormat, string> = { ndjson: 'application/x-ndjson', csv: 'text/csv' };

interface SavePicker {
  showSaveFilePicker(options: { suggestedName: string }): Promise<{
    createWritable(): Promise<{
      write(data: string): Promise<void>;
      close(): Promise<void>;
      abort(): Promise<void>;
    }>;
  }>;
}

function savePicker(): SavePicker | null {
  return 'showSaveFilePicker' in window ? (window as unknown as SavePicker) : null;
}

export function ExportResults(props: {
  database: string;
  query: string;
  parameters: Record<string, unknown>;
}) {
  const [file, setFile] = useState<{ url: string; name: string; rows: number } | null>(null);
  const [written, setWritten] = useState<number | null>(null);
  const [toFile, setToFile] = useState(false);
  const [failure, setFailure] = useState('');
  const [busy, setBusy] = useState(false);
  const picker = savePicker();
  useEffect(() => () => (file ? URL.revokeObjectURL(file.url) : undefined), [file]);

  async function run(format: ExportFormat) {
    setBusy(true);
    setFailure('');
    setFile(null);
    setWritten(null);
    const name = `results.${format}`;
    const open = () => openQueryStream(props);
    try {
      if (toFile && picker) {
        // The picker needs this click's user activation: asked before anything is awaited.
        const handle = await picker.showSaveFilePicker({ suggestedName: name });
        setWritten(await exportRows(open, format, fileSink(await handle.createWritable()), null));
      } else {
        const sink = blobSink(TYPES[format]);
        const rows = await exportRows(open, format, sink, EXPORT_ROW_CAP);
        setFile({ url: URL.createObjectURL(sink.blob()), name, rows });
      }
    } catch (error) {
      // Closing the picker without a file is not a failure.
      if (!(error instanceof DOMException && error.name === 'AbortError')) setFailure(describeError(error));
    } finally {
      setBusy(false);
    }
  }

  return (
    <div className="export">
      <button type="button" disabled={busy} onClick={() => void run('ndjson')}>
        Export as NDJSON
      </button>
      <button type="button" disabled={busy} onClick={() => void run('csv')}>
        Export as CSV
      </button>
      {picker && (
        <label>
          <input type="checkbox" checked={toFile} onChange={(event) => setToFile(event.target.checked)} />{' '}
          Write straight to a file (no row limit)
        </label>
      )}
      {file && (
        <a href={file.url} download={file.name}>
          Save {file.name} ({file.rows} rows)
        </a>
      )}
      {written !== null && <p role="status">Written: {written} rows.</p>}
      {failure && (
        <p role="alert" className="error">
          {failure}
        </p>
      )}
    </div>
  );
}
