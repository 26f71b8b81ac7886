import type { FastifyBaseLogger } from 'fastify';
import type { Bindings, ChildLoggerOptions, LevelWithSilentOrString, LogFn } from 'pino';

/** pino's standard levels (the tenant defines no custom ones); `silent` writes nothing. */
const LEVEL_VALUES: Record<string, number> = {
  trace: 10,
  debug: 20,
  info: 30,
  warn: 40,
  error: 50,
  fatal: 60,
  silent: Number.POSITIVE_INFINITY,
};

type Level = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace';

/**
 * A child logger that is made only when a line is written through it. Every request gets a child for its
 * request id (Fastify's) and one for its database (the tenant's onRequest hook); pino builds a child by
 * serialising its bindings at once, and the two were ~5% of the request thread in a PUT profile
 * (docs/benchmarks.md), for requests that, at the default level, write no line at all. Lines written
 * through it are exactly those of `parent.child(bindings, options)`, which it becomes on the first one.
 */
export class LazyChildLogger implements FastifyBaseLogger {
  #made: FastifyBaseLogger | undefined;

  constructor(
    private readonly parent: FastifyBaseLogger,
    private readonly childBindings: Bindings,
    private readonly options: ChildLoggerOptions = {},
  ) {}

  /** Fastify's `childLoggerFactory`: the request's logger, made lazily. */
  static factory(this: unknown, logger: FastifyBaseLogger, bindings: Bindings, options: ChildLoggerOptions) {
    return new LazyChildLogger(logger, bindings, options);
  }

  get level(): LevelWithSilentOrString {
    return this.#made?.level ?? this.options.level ?? this.parent.level;
  }

  set level(level: LevelWithSilentOrString) {
    this.#logger().level = level;
  }

  fatal: LogFn = this.#at('fatal');
  error: LogFn = this.#at('error');
  warn: LogFn = this.#at('warn');
  info: LogFn = this.#at('info');
  debug: LogFn = this.#at('debug');
  trace: LogFn = this.#at('trace');
  silent: LogFn = () => undefined;

  child(bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
    return new LazyChildLogger(this, bindings, options);
  }

  #logger(): FastifyBaseLogger {
    // A lazy parent's child would be lazy again: the real child is made from the parent's real logger.
    const parent = this.parent instanceof LazyChildLogger ? this.parent.#logger() : this.parent;
    this.#made ??= parent.child(this.childBindings, this.options);
    return this.#made;
  }

  #at(level: Level): LogFn {
    return ((...args: Parameters<LogFn>) => {
      // Below the level nothing is written, so nothing needs making (and the arguments are not looked at).
      if (LEVEL_VALUES[level]! < (LEVEL_VALUES[this.level] ?? 0)) return;
      this.#logger()[level](...args);
    }) as LogFn;
  }
}
