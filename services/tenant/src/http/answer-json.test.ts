import { describe, expect, it } from 'vitest';
import { answerJson } from './answer-json.js';

describe('answerJson', () => {
  it("is JSON.stringify's text, made once per answer object", () => {
    const answer = { Results: [{ Name: 'Ada', '@metadata': { '@id': 'users/1' } }], TotalResults: 1 };
    const text = answerJson(answer);
    expect(text).toBe(JSON.stringify(answer));
    // Answers are never changed once made (the result cache shares them): the text kept is the one sent.
    answer.TotalResults = 2;
    expect(answerJson(answer)).toBe(text);
    expect(answerJson({ ...answer })).toBe(JSON.stringify({ ...answer }));
  });
});
