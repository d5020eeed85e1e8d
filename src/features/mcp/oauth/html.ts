/**
 * The two small HTML answers of the authorization flow that are not React pages: an error that
 * cannot be sent back to the client (unknown client, unregistered redirect URI, expired request),
 * and the hand-over to the client's redirect URI after the consent decision.
 *
 * The hand-over is a page that navigates (`<meta http-equiv="refresh">`, the `Refresh` header and
 * a link), not a 303: browsers apply the page's CSP `form-action 'self'` to the redirects that
 * follow a form submission, which would block a redirect to the client's loopback or custom-scheme
 * URI; a navigation started by the answer page is not a form submission. Other pages keep their
 * policy unchanged.
 */
import 'server-only';

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

const STYLE = `
:root { color-scheme: light dark; }
body { margin: 0; font: 16px/1.5 system-ui, sans-serif; background: #f8fafc; color: #0f172a; }
main { max-width: 32rem; margin: 3rem auto; padding: 1.5rem; background: #fff; border: 1px solid #e2e8f0; border-radius: .5rem; }
h1 { font-size: 1.25rem; margin: 0 0 .75rem; }
a { color: #1d4ed8; }
@media (prefers-color-scheme: dark) {
  body { background: #020617; color: #e2e8f0; }
  main { background: #0f172a; border-color: #1e293b; }
  a { color: #93c5fd; }
}
@media (max-width: 36rem) { main { margin: 1rem; } }`;

function page(title: string, body: string, head = ''): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">${head}<title>${escapeHtml(title)} · Tracker</title><style>${STYLE}</style></head><body><main>${body}</main></body></html>`;
}

const HTML_HEADERS = {
  'content-type': 'text/html; charset=utf-8',
  'cache-control': 'no-store',
  'referrer-policy': 'no-referrer',
};

/** An error shown to the user (never sent to a client's redirect URI). */
export function errorPage(status: number, title: string, message: string): Response {
  const body = `<h1>${escapeHtml(title)}</h1><p>${escapeHtml(message)}</p><p><a href="/projects">Back to Tracker</a></p>`;
  return new Response(page(title, body), { status, headers: HTML_HEADERS });
}

/** A URL that can stand inside the refresh instruction and an attribute unchanged. */
function safeTarget(url: string): string {
  return url.replace(/'/g, '%27').replace(/"/g, '%22');
}

/** Sends the browser on to the client's redirect URI (see the file comment). */
export function handOverPage(target: string, clientName: string): Response {
  const url = safeTarget(target);
  const name = escapeHtml(clientName);
  const body =
    `<h1>Returning to ${name}</h1>` +
    `<p>If ${name} does not open by itself, <a href="${escapeHtml(url)}" data-testid="oauth-continue">continue to ${name}</a>. ` +
    'You can close this tab afterwards.</p>';
  return new Response(
    page(`Returning to ${clientName}`, body, `<meta http-equiv="refresh" content="0; url='${escapeHtml(url)}'">`),
    {
      status: 200,
      headers: { ...HTML_HEADERS, refresh: `0; url=${url}` },
    },
  );
}
