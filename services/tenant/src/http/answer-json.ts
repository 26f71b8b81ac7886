// The JSON text of an answer, made once per answer object. The query runner hands out the same object for
// every request its result cache answers (a listing page or a popular search asked by many users at once),
// and serialising it again for each request was 8.9% of a tenant's CPU in the NuGet load test without think
// time (docs/benchmarks.md). The text lives as long as the object: the cache's entry, or the one request.
const texts = new WeakMap<object, string>();

/** `JSON.stringify(answer)`, the same text the route's serializer would send, kept beside the object. */
export function answerJson(answer: object): string {
  let text = texts.get(answer);
  if (text === undefined) {
    text = JSON.stringify(answer);
    texts.set(answer, text);
  }
  return text;
}

/** The content type fastify gives a JSON answer it serialises itself. */
export const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';
