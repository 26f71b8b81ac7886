/** A tiny fetch wrapper for tests of the tenant's HTTP API: status, headers, text and parsed JSON. */
export interface Reply {
  status: number;
  headers: Headers;
  text: string;
  json: Record<string, unknown> & { code?: string; detail?: string };
}

export type Call = (
  method: string,
  path: string,
  body?: unknown,
  headers?: Record<string, string>,
) => Promise<Reply>;

export function httpClient(base: () => string): Call {
  return async (method, path, body, headers = {}) => {
    const init: RequestInit = { method, headers: { ...headers } };
    if (body !== undefined) {
      init.body = typeof body === 'string' ? body : JSON.stringify(body);
      (init.headers as Record<string, string>)['content-type'] ??= 'application/json';
    }
    const response = await fetch(base() + path, init);
    const text = await response.text();
    let json = {};
    try {
      json = text ? JSON.parse(text) : {};
    } catch {
      // Not JSON (NDJSON streams are parsed by the caller).
    }
    return { status: response.status, headers: response.headers, text, json };
  };
}
