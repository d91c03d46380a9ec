import TurndownService from 'turndown';

/** The few DOM members the rules below read; turndown hands us domino nodes. */
interface DomNode {
  nodeName: string;
  parentNode: DomNode | null;
  childNodes: ArrayLike<DomNode>;
  getAttribute?(name: string): string | null;
}

// Never content: scripts, styles and page chrome would be indexed as text otherwise.
const DROPPED = [
  'head',
  'title',
  'meta',
  'link',
  'script',
  'style',
  'noscript',
  'template',
  'nav',
  'iframe',
  'object',
  'embed',
  'svg',
  'canvas',
  'button',
  'select',
  'input',
  'textarea',
] as const;

/**
 * Only markers that would change the structure at the start of a text node are escaped: a
 * paragraph reading "# 1 priority" must not become a heading for the chunker. Turndown's default
 * also escapes every `_`, `*`, `[` and backtick, which the chunks (embedded and BM25-indexed as
 * plain text) would then carry as noise such as `snake\_case`.
 */
function escapeBlockMarkers(text: string): string {
  return text
    .replace(/^(#{1,6})(?=[ \t]|$)/, '\\$1')
    .replace(/^([-+*])(?=[ \t])/, '\\$1')
    .replace(/^(\d+)([.)])(?=[ \t])/, '$1\\$2')
    .replace(/^>/, '\\>')
    .replace(/^(=+|-+)(?=[ \t]*$)/, '\\$1')
    .replace(/^(```|~~~)/, '\\$1');
}

function cellText(content: string): string {
  return content.replace(/\s+/g, ' ').trim().replace(/\|/g, '\\|');
}

function closestTable(node: DomNode): DomNode | null {
  for (let n = node.parentNode; n; n = n.parentNode) if (n.nodeName === 'TABLE') return n;
  return null;
}

function firstRowOf(table: DomNode): DomNode | undefined {
  const stack: DomNode[] = [table];
  while (stack.length) {
    const n = stack.shift()!;
    if (n.nodeName === 'TR') return n;
    if (n !== table && n.nodeName === 'TABLE') continue;
    stack.unshift(...Array.from(n.childNodes));
  }
  return undefined;
}

function createService(): TurndownService {
  const service = new TurndownService({
    headingStyle: 'atx',
    codeBlockStyle: 'fenced',
    bulletListMarker: '-',
    hr: '---',
  });
  service.escape = escapeBlockMarkers;
  service.remove([...DROPPED]);

  // Link targets and image sources cost tokens of a small embedding window and put URL fragments
  // into the BM25 postings; the visible text is what a question will be about.
  service.addRule('linkText', { filter: 'a', replacement: (content) => content });
  service.addRule('imageAlt', {
    filter: 'img',
    replacement: (_content, node) => {
      const alt = ((node as unknown as DomNode).getAttribute?.('alt') ?? '').trim();
      return alt ? ` ${alt} ` : '';
    },
  });

  // Turndown's core has no table rule and would emit each cell as its own paragraph, losing
  // which value belongs to which row; a pipe table keeps rows on one line each.
  service.addRule('tableCell', {
    filter: ['th', 'td'],
    replacement: (content) => ` ${cellText(content)} |`,
  });
  service.addRule('tableRow', {
    filter: 'tr',
    replacement: (content, node) => {
      const row = node as unknown as DomNode;
      let out = `\n|${content}`;
      const table = closestTable(row);
      if (table && firstRowOf(table) === row) {
        const cells = Array.from(row.childNodes).filter((c) => c.nodeName === 'TH' || c.nodeName === 'TD');
        out += `\n|${' --- |'.repeat(Math.max(1, cells.length))}`;
      }
      return out;
    },
  });
  service.addRule('tableSection', {
    filter: ['thead', 'tbody', 'tfoot'],
    replacement: (content) => content,
  });
  service.addRule('table', {
    filter: 'table',
    replacement: (content) => `\n\n${content.replace(/\n+/g, '\n').trim()}\n\n`,
  });
  return service;
}

let shared: TurndownService | undefined;

/** HTML to Markdown with ATX headings, so the chunker can follow the page's sections. */
export function htmlToMarkdown(html: string): string {
  shared ??= createService();
  return shared.turndown(html).trim();
}
