/**
 * Code blocks of the Markdown documentation, so the docs' TypeScript can be type-checked and the
 * README's quick starts run. A block may carry marks in an HTML comment on the closest non-blank
 * line above its fence, e.g. `<!-- snippet: quick-start -->` or `<!-- snippet: no-check -->`.
 */

export interface Snippet {
  /** The Markdown file, relative to the repository root. */
  file: string;
  /** 1-based line, in that file, of the block's first line of code. */
  line: number;
  /** The fence's info string, lower case: `ts`, `sh`, ... */
  language: string;
  code: string;
  /** The words of the `<!-- snippet: ... -->` comment above the fence. */
  marks: string[];
}

const OPENING = /^ {0,3}(`{3,}|~{3,})\s*([^\s`]*)/;
const MARKS = /^\s*<!--\s*snippet:\s*(.*?)\s*-->\s*$/;

function marksAbove(lines: readonly string[], fence: number): string[] {
  for (let i = fence - 1; i >= 0; i--) {
    const text = lines[i] as string;
    if (text.trim() === '') continue;
    const match = MARKS.exec(text);
    return match ? (match[1] as string).split(/[\s,]+/).filter(Boolean) : [];
  }
  return [];
}

/** Every fenced code block of `markdown`, in order. An unclosed block runs to the end of the file. */
export function extractSnippets(file: string, markdown: string): Snippet[] {
  const lines = markdown.split(/\r?\n/);
  const snippets: Snippet[] = [];
  for (let i = 0; i < lines.length; i++) {
    const opening = OPENING.exec(lines[i] as string);
    if (!opening) continue;
    const fence = opening[1] as string;
    const closing = new RegExp(`^ {0,3}${fence[0] === '`' ? '`' : '~'}{${fence.length},}\\s*$`);
    let end = i + 1;
    while (end < lines.length && !closing.test(lines[end] as string)) end++;
    snippets.push({
      file,
      line: i + 2,
      language: (opening[2] as string).toLowerCase(),
      code: lines.slice(i + 1, end).join('\n'),
      marks: marksAbove(lines, i),
    });
    i = end;
  }
  return snippets;
}

/** TypeScript blocks: the ones the docs test type-checks. */
export function isTypeScript(snippet: Snippet): boolean {
  return snippet.language === 'ts' || snippet.language === 'typescript';
}
