// @rookery/control-api: the control plane's HTTP API (tenants, principals,
// certificates, TOTP, database records, jobs). It has no process of its own:
// the gateway hosts it in-process and hands it authenticated callers (see
// README.md for why). Its data and the admin operations it offers live in
// @rookery/control-store, which the CLI uses directly.
export { buildControlApi, type ControlAnswer, type ControlApi, type ControlApiOptions } from './api/app.js';
export type { ControlCaller } from './api/caller.js';
