// The RQL editor: a native textarea (keyboard, selection, undo, labels and screen readers as the browser
// gives them) over a copy of its text with RQL's keywords, strings, numbers, $parameters and comments
// coloured. The textarea's own text is transparent, so the coloured copy shows through, scrolled with it.
// Why not CodeMirror 6: it injects its styles as <style> elements, which the gateway's CSP (style-src
// 'self', no nonce for a static page) refuses, and it added 92 KB of compressed JavaScript (measured).
import { type KeyboardEvent, useRef } from 'react';
import { tokenize } from './rql-tokens.js';

export function RqlEditor(props: {
  value: string;
  onChange: (text: string) => void;
  onKeyDown: (event: KeyboardEvent) => void;
  invalid: boolean;
  describedBy: string | undefined;
}) {
  const copy = useRef<HTMLPreElement>(null);
  return (
    <div className="rql-field">
      <pre ref={copy} className="rql-highlight" aria-hidden="true">
        {tokenize(props.value).map((token, i) =>
          token.kind === 'text' ? (
            token.text
          ) : (
            // biome-ignore lint/suspicious/noArrayIndexKey: tokens are positional; the text is re-cut each render
            <span key={i} className={`rql-${token.kind}`}>
              {token.text}
            </span>
          ),
        )}
        {/* A last newline keeps the copy as tall as the textarea when the text ends with one. */}
        {'\n'}
      </pre>
      <textarea
        id="rql"
        className="rql-input"
        spellCheck={false}
        rows={6}
        value={props.value}
        aria-invalid={props.invalid ? true : undefined}
        aria-describedby={props.describedBy}
        onChange={(event) => props.onChange(event.target.value)}
        onKeyDown={props.onKeyDown}
        onScroll={(event) => {
          if (copy.current) copy.current.scrollTop = event.currentTarget.scrollTop;
        }}
      />
    </div>
  );
}
