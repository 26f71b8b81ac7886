// Types of gateway-call.mjs for the TypeScript callers (tests).
export function callGateway(
  url: string,
  admin: { caFile: string; certFile: string; keyFile: string },
  method: string,
  urlPath: string,
  body?: unknown,
): Promise<{ status: number; body: string }>;
