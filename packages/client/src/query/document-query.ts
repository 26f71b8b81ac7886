// A query bound to a session: the builder's RQL, run when a result is asked for. Whole documents go
// through the session's identity map (the same object as a load of that id); projections, facets and
// suggestions come back as plain values.
import type { FacetResult, QueryRequest, SuggestionResult } from '@rookery/protocol';
import { clientError, errorForCode } from '../errors.js';
import type { QueryResultBody } from '../http/responses.js';
import { isJsonObject } from '../json-object.js';
import type { EntityType } from '../session/tracked-documents.js';
import type { Facet, SuggestionRequest } from './facets.js';
import { QueryBuilder, type QuerySource } from './query-builder.js';

export interface QueryStatistics {
  TotalResults: number;
  SkippedResults: number;
  IndexName: string | null;
  IsStale: boolean;
  DurationInMs: number;
  ResultEtag: string | null;
}

/** What a query needs from its session. */
export interface QueryRunner {
  runQuery(request: QueryRequest): Promise<QueryResultBody>;
  /** The tracked entity for a whole document in a query result. */
  trackQueryResult(document: Record<string, unknown>, documentType?: EntityType<unknown>): object;
}

export interface AggregationQuery {
  execute(): Promise<Record<string, FacetResult>>;
  toString(): string;
}

export interface SuggestionQuery {
  execute(): Promise<Record<string, SuggestionResult>>;
  toString(): string;
}

/** A whole document (with its id in `@metadata`), as opposed to a projection or a facet. */
const isDocument = (value: unknown): value is Record<string, unknown> =>
  isJsonObject(value) && isJsonObject(value['@metadata']) && typeof value['@metadata']['@id'] === 'string';

export class DocumentQuery<T = Record<string, unknown>> extends QueryBuilder {
  private statisticsSinks: ((stats: QueryStatistics) => void)[] = [];

  constructor(
    private readonly runner: QueryRunner,
    source: QuerySource,
    private readonly documentType?: EntityType<T>,
  ) {
    super(source);
  }

  /** Receives TotalResults, IndexName, IsStale, DurationInMs… of the run: an object to fill, or a callback. */
  statistics(out: Partial<QueryStatistics> | ((stats: QueryStatistics) => void)): this {
    this.statisticsSinks.push(typeof out === 'function' ? out : (stats) => Object.assign(out, stats));
    return this;
  }

  async toList(): Promise<T[]> {
    return this.results(this.toRequest());
  }

  /** The first result, or null when there is none. */
  async first(): Promise<T | null> {
    const [result] = await this.results(this.toRequest(1));
    return result ?? null;
  }

  /** The only result; NonUniqueResultError when there are none or several. */
  async single(): Promise<T> {
    const results = await this.results(this.toRequest(2));
    if (results.length !== 1) {
      throw errorForCode({
        code: 'NonUniqueResult',
        status: null,
        detail: `Expected exactly one result, got ${results.length === 0 ? 'none' : 'more than one'}: ${this.toString()}`,
      });
    }
    return results[0]!;
  }

  async count(): Promise<number> {
    return (await this.run(this.toRequest(0))).TotalResults;
  }

  async any(): Promise<boolean> {
    return (await this.count()) > 0;
  }

  /** Counts per value (or range) of the facets, over the query's matches. */
  aggregateBy(...facets: Facet[]): AggregationQuery {
    this.setFacets(facets);
    return {
      execute: async () => byName((await this.run(this.toRequest())).Results as FacetResult[]),
      toString: () => this.toString(),
    };
  }

  /** "Did you mean": terms the index holds that are close to the given one. */
  suggestUsing(...suggestions: SuggestionRequest[]): SuggestionQuery {
    this.setSuggestions(suggestions);
    return {
      execute: async () => byName((await this.run(this.toRequest())).Results as SuggestionResult[]),
      toString: () => this.toString(),
    };
  }

  private async results(request: QueryRequest): Promise<T[]> {
    const answer = await this.run(request);
    if (this.isProjection) return answer.Results as T[];
    return answer.Results.map((result) =>
      isDocument(result) ? (this.runner.trackQueryResult(result, this.documentType) as T) : (result as T),
    );
  }

  private async run(request: QueryRequest): Promise<QueryResultBody> {
    const answer = await this.runner.runQuery(request);
    const stats: QueryStatistics = {
      TotalResults: answer.TotalResults,
      SkippedResults: answer.SkippedResults,
      IndexName: answer.IndexName,
      IsStale: answer.IsStale,
      DurationInMs: answer.DurationInMs,
      ResultEtag: answer.ResultEtag ?? null,
    };
    for (const sink of this.statisticsSinks) sink(stats);
    return answer;
  }
}

function byName<R extends { Name: string }>(results: R[]): Record<string, R> {
  if (!Array.isArray(results))
    throw clientError('UnexpectedResponse', 'The server sent no facet or suggestion results');
  return Object.fromEntries(results.map((r) => [r.Name, r]));
}
