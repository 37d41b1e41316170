/** HTML text helpers of the reference page: everything from the OpenAPI document goes through `esc` or `markdown`. */

const ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export const esc = (text: unknown): string => String(text).replace(/[&<>"']/g, (c) => ENTITIES[c]!);

/** An id usable in a URL fragment, stable for one input (deep links survive a rebuild). */
export const anchor = (...parts: string[]): string =>
  parts
    .join('-')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '');

/**
 * Inline markdown: code spans, [links](url), bare http(s) URLs and **bold**. Links are only ever
 * anchors (never loaded resources), so a description with a URL cannot make the page leave the host.
 */
export function inline(text: string): string {
  const out: string[] = [];
  // Code spans first: their content is literal.
  for (const [i, part] of text.split(/`([^`]*)`/).entries()) {
    if (i % 2 === 1) {
      out.push(`<code>${esc(part)}</code>`);
      continue;
    }
    let html = esc(part);
    html = html.replace(
      /\[([^\]]+)\]\((https?:\/\/[^)\s]+|#[^)\s]*|\/[^)\s]*)\)/g,
      (_m, label: string, url: string) => `<a href="${url}">${label}</a>`,
    );
    html = html.replace(
      /(^|[\s(])(https?:\/\/[^\s<)]+[^\s<).,;:])/g,
      (_m, pre: string, url: string) => `${pre}<a href="${url}">${url}</a>`,
    );
    html = html.replace(/\*\*([^*]+)\*\*/g, '<strong>$1</strong>');
    out.push(html);
  }
  return out.join('');
}

/** Block markdown: paragraphs, `-`/`*`/`1.` lists and fenced code, the subset OpenAPI descriptions use in practice. */
export function markdown(text: string | undefined): string {
  if (!text) return '';
  const blocks: string[] = [];
  const lines = text.replace(/\r\n?/g, '\n').split('\n');
  let para: string[] = [];
  let list: { ordered: boolean; items: string[] } | undefined;
  const flush = () => {
    if (para.length) blocks.push(`<p>${inline(para.join(' '))}</p>`);
    para = [];
    if (list) {
      const tag = list.ordered ? 'ol' : 'ul';
      blocks.push(`<${tag}>${list.items.map((item) => `<li>${inline(item)}</li>`).join('')}</${tag}>`);
    }
    list = undefined;
  };
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (/^\s*```/.test(line)) {
      flush();
      const code: string[] = [];
      for (i++; i < lines.length && !/^\s*```/.test(lines[i]!); i++) code.push(lines[i]!);
      blocks.push(`<pre><code>${esc(code.join('\n'))}</code></pre>`);
      continue;
    }
    const item = /^\s*(?:([-*])|(\d+)\.)\s+(.*)$/.exec(line);
    if (item) {
      const ordered = item[2] !== undefined;
      if (para.length || (list && list.ordered !== ordered)) flush();
      list ??= { ordered, items: [] };
      list.items.push(item[3]!);
    } else if (line.trim() === '') {
      flush();
    } else if (list && /^\s+\S/.test(line)) {
      // A continuation line of the last list item.
      list.items[list.items.length - 1] += ` ${line.trim()}`;
    } else {
      if (list) flush();
      para.push(line.trim());
    }
  }
  flush();
  return blocks.join('\n');
}
