// Queues log through the caller's pino logger (the worker service passes its
// own); without one, warnings and errors still reach stderr as JSON.
import pino, { type Logger } from 'pino';

export interface QueueLoggerOption {
  logger?: Logger;
}

export function queueLogger(options: QueueLoggerOption): Logger {
  return (options.logger ?? pino({ level: 'warn' }, pino.destination(2))).child({ component: 'jobs' });
}
