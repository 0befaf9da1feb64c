/**
 * HTML escaping for server-rendered pages and HTML mail (payments' hosted checkout, media buying's pages and admission
 * mail): the one helper every service uses, so no page or message escapes text its own way.
 */

const REFERENCES: Readonly<Record<string, string>> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

/**
 * Escapes `text` for HTML element content and for quoted attribute values (HTML Living Standard, "Serializing HTML
 * fragments": `&`, `<`, `>`, `"`, and `'` for single-quoted attributes), so no value can open a tag, an attribute or
 * a character reference. It does not make a value safe inside a `<script>` or `<style>` element, an unquoted attribute,
 * or a URL attribute (`href="javascript:..."`): pages put values only in text and quoted attributes.
 * @returns the text with those five characters as character references (`&amp;`, `&lt;`, `&gt;`, `&quot;`, `&#39;`).
 */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => REFERENCES[c]!);
}
