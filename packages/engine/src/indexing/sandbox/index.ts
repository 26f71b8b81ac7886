export {
  compileJsIndex,
  DEFAULT_SANDBOX_LIMITS,
  type JsIndexProgram,
  type JsIndexSource,
  type MapOutcome,
  resolveSandboxLimits,
  SandboxError,
  type SandboxErrorCode,
  type SandboxLimits,
} from './js-index.js';
