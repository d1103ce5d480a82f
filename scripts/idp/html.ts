// HTML helpers for the dev IdP's pages: every interpolated value goes through escapeHtml.
const ENTITIES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };

export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (ch) => ENTITIES[ch] ?? ch);
}

/** Bare page; `title` is escaped, `body` must already be safe HTML. No external assets (works offline). */
export function page(title: string, body: string): string {
  return `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)}</title>
<meta name="viewport" content="width=device-width, initial-scale=1"></head>
<body><h1>${escapeHtml(title)}</h1>${body}</body></html>`;
}
