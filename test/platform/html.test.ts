import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { escapeHtml } from '../../src/platform/html.ts';

describe('platform: html', () => {
  test('escapeHtml turns the five special characters into references and leaves other text as it is', () => {
    assert.equal(
      escapeHtml(`<a href="x" title='y'>&amp;</a>`),
      '&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;&amp;amp;&lt;/a&gt;',
    );
    assert.equal(escapeHtml('Café € 😀 plain text'), 'Café € 😀 plain text');
    assert.equal(escapeHtml(''), '');
  });

  test('an escaped value cannot leave a quoted attribute or open a tag, whatever it holds', () => {
    for (const hostile of [
      '"><script>alert(1)</script>',
      "' onmouseover='x",
      '</title><img src=x onerror=y>',
      '&#x3C;',
    ]) {
      const escaped = escapeHtml(hostile);
      assert.doesNotMatch(escaped, /[<>"']/);
      // Every & starts one of the five references: no raw reference of the input survives.
      assert.doesNotMatch(escaped, /&(?!amp;|lt;|gt;|quot;|#39;)/);
    }
  });
});
