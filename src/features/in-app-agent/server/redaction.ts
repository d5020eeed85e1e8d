/**
 * Masking of secrets (and, when a project asks for it, e-mail addresses and phone numbers) in text
 * the product stores: the assistant's stored events, the MCP audit trail's previews, and exports.
 *
 * Masks keep the text's length in UTF-16 code units: each masked character becomes `MASK` (one
 * code unit), so the positions of a run's live stream (a text's length is its weight, see
 * compact.ts `eventWeight`) stay true for stored rows, and a watcher that reattaches from a
 * position gets the masked rest of a message at exactly the right character. A character right
 * after a backslash is never masked (nor the four hex digits of `\u`), so JSON text (tool
 * arguments and results are stored as JSON text) stays valid JSON.
 *
 * What is recognised is `SECRET_PATTERNS` (kinds of well-known shape: cloud and service keys,
 * tokens, JWTs, this product's own `sk_` secrets, passwords in URLs, private key blocks) and, with
 * `contacts`, `CONTACT_PATTERNS`. A recognisable prefix (`ghp_`, `AKIA`, `sk-`...) is kept, so a
 * reader sees what kind of secret was there. Pure and isomorphic; no state.
 */
import type { StoredEvent } from '../schema';

/** The character a masked character becomes (one UTF-16 code unit; not Markdown syntax). */
export const MASK = '•';

/** A stretch of a match to mask: [start, end) relative to the match. */
type Span = readonly [number, number];

export interface MaskPattern {
  /** What it finds, for tests and documentation. */
  kind: string;
  /** A global regular expression. */
  regex: RegExp;
  /**
   * The parts of a match to mask (default: all of it but `keep` leading characters). Return null
   * to leave a match alone (a false positive the regular expression cannot rule out).
   */
  spans?: (match: RegExpExecArray) => Span[] | null;
  /** Leading characters kept (a kind's fixed prefix). */
  keep?: number;
}

/** Masks the value of group `n` of a match. */
function group(n: number): (m: RegExpExecArray) => Span[] | null {
  return (m) => {
    const value = m[n];
    if (!value) return null;
    const at = m[0].lastIndexOf(value);
    return [[at, at + value.length]];
  };
}

/** Secrets of well-known shapes, masked in everything the product stores. */
export const SECRET_PATTERNS: readonly MaskPattern[] = [
  {
    // -----BEGIN RSA PRIVATE KEY----- … -----END RSA PRIVATE KEY----- (also inside JSON text): the
    // body is masked, the armour lines kept.
    kind: 'private-key',
    regex: /-----BEGIN ([A-Z0-9 ]*)PRIVATE KEY-----([\s\S]*?)-----END \1PRIVATE KEY-----/g,
    spans: (m) => {
      const start = m[0].indexOf('-----', 5) + 5;
      const end = m[0].lastIndexOf('-----END');
      return end > start ? [[start, end]] : null;
    },
  },
  // AWS access key ids (AKIA long-term, ASIA temporary, ...).
  { kind: 'aws-access-key-id', regex: /\b(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}\b/g, keep: 4 },
  {
    // An AWS secret access key, recognisable only by its name next to it.
    kind: 'aws-secret-access-key',
    regex: /\baws_?secret_?access_?key\b["']?\s*[:=]\s*["']?([A-Za-z0-9/+=]{40})(?![A-Za-z0-9/+=])/gi,
    spans: group(1),
  },
  // GitHub: classic and OAuth/app tokens, fine-grained personal access tokens.
  { kind: 'github-token', regex: /\bgh[pousr]_[A-Za-z0-9]{36,255}\b/g, keep: 4 },
  { kind: 'github-fine-grained-token', regex: /\bgithub_pat_[A-Za-z0-9_]{22,255}\b/g, keep: 11 },
  // Slack tokens and incoming-webhook URLs.
  { kind: 'slack-token', regex: /\bxox[abposre]-[A-Za-z0-9-]{10,250}\b/g, keep: 5 },
  {
    kind: 'slack-webhook',
    regex: /\bhttps:\/\/hooks\.slack\.com\/(?:services|workflows)\/([A-Za-z0-9_/-]{20,200})/g,
    spans: group(1),
  },
  // Anthropic (sk-ant-…) and OpenAI (sk-…, sk-proj-…) API keys.
  { kind: 'anthropic-key', regex: /\bsk-ant-[A-Za-z0-9_-]{20,250}/g, keep: 7 },
  { kind: 'openai-key', regex: /\bsk-(?!ant-)[A-Za-z0-9_-]{20,250}/g, keep: 3 },
  // Stripe secret and restricted keys.
  { kind: 'stripe-key', regex: /\b[rs]k_(?:live|test)_[A-Za-z0-9]{16,250}\b/g, keep: 8 },
  // Google API keys.
  { kind: 'google-api-key', regex: /\bAIza[A-Za-z0-9_-]{35}(?![A-Za-z0-9_-])/g, keep: 4 },
  // This product's own API key secrets: sk_<16>_<32>.
  { kind: 'product-key', regex: /\bsk_[A-Za-z0-9_-]{16}_[A-Za-z0-9_-]{32}(?![A-Za-z0-9_-])/g, keep: 3 },
  // JSON Web Tokens: base64url of `{"` starts both the header and the payload.
  {
    kind: 'jwt',
    regex: /\beyJ[A-Za-z0-9_-]{5,}\.eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{10,}/g,
    keep: 3,
  },
  // A bearer token in an Authorization header.
  {
    kind: 'bearer-token',
    regex: /\bBearer\s+([A-Za-z0-9._~+/-]{20,}=*)/g,
    spans: group(1),
  },
  // scheme://user:password@host: the password.
  {
    kind: 'url-password',
    regex: /\b[a-zA-Z][a-zA-Z0-9+.-]{1,20}:\/\/[^\s/:@"'\\<>]{1,200}:([^\s/@"'\\<>]{1,200})@/g,
    spans: group(1),
  },
];

/** Digits in a stretch of text. */
const digitCount = (s: string) => s.replace(/\D/g, '').length;

/** E-mail addresses and phone numbers: masked when the project's setting says so. */
export const CONTACT_PATTERNS: readonly MaskPattern[] = [
  {
    // The local part and the domain are masked; `@` and the dots are kept.
    kind: 'email',
    regex: /(?<![A-Za-z0-9._%+-])[A-Za-z0-9._%+-]{1,64}@[A-Za-z0-9-]{1,63}(?:\.[A-Za-z0-9-]{1,63})*\.[A-Za-z]{2,24}\b/g,
    spans: (m) => {
      const out: Array<[number, number]> = [];
      let from = -1;
      for (let i = 0; i <= m[0].length; i++) {
        const c = m[0][i];
        const plain = c !== undefined && c !== '@' && c !== '.';
        if (plain && from < 0) from = i;
        if (!plain && from >= 0) {
          out.push([from, i]);
          from = -1;
        }
      }
      return out;
    },
  },
  {
    // A phone number: an international "+…" number, or one written in groups ("(555) 123-4567",
    // "555-123-4567", "030 1234 5678"); 8 to 15 digits. Dates, times, versions, addresses of
    // machines and plain long numbers (ids, amounts) are left alone. Only the digits are masked.
    kind: 'phone',
    regex:
      /(?<![\w+.:/-])(?:\+\d{8,15}|(?:\+\d{1,3}[ .-]?)?(?:\(\d{1,5}\)[ .-]?)?\d{2,5}(?:[ .-]\d{2,5}){1,5})(?![\w:/]|[.-]\d)/g,
    spans: (m) => {
      const s = m[0];
      const digits = digitCount(s);
      if (digits < 8 || digits > 15) return null;
      const international = s.startsWith('+');
      const grouped = /[ .-]/.test(s) || s.includes('(');
      if (!international && !grouped) return null;
      // Dates (2026-12-02, 2026.12.02, 02.12.2026), dotted versions and addresses (1.2.3.4).
      if (/^\d{4}([.-])\d{1,2}\1\d{1,2}$/.test(s) || /^\d{1,2}([.-])\d{1,2}\1\d{4}$/.test(s)) return null;
      // Only dots: a number written 555.123.4567, not a version (1.2.3) or an address (10.0.0.12).
      if (/^\d+(\.\d+)+$/.test(s) && (/(^|\.)\d(\.|$)/.test(s) || /^\d{1,3}(\.\d{1,3}){3}$/.test(s))) return null;
      const out: Array<[number, number]> = [];
      for (let i = 0; i < s.length; i++) if (/\d/.test(s[i]!)) out.push([i, i + 1]);
      return out;
    },
  },
];

export interface MaskOptions {
  /** Also mask e-mail addresses and phone numbers (the project's setting). */
  contacts?: boolean;
}

/** Quick test: could this text hold anything a pattern finds? (Most stored text holds nothing.) */
const MAYBE_SECRET = /[A-Za-z0-9_+/=.-]{16}|-----BEGIN|:\/\/[^\s]*@/;
const MAYBE_CONTACT = /@|\d[ .()-]?\d/;

/**
 * The text with every secret (and, with `contacts`, every e-mail address and phone number) masked,
 * of exactly the same length (UTF-16 code units). Characters right after a backslash are kept, so
 * JSON text stays JSON.
 */
export function maskText(text: string, opts: MaskOptions = {}): string {
  if (!text) return text;
  const secrets = MAYBE_SECRET.test(text);
  const contacts = opts.contacts === true && MAYBE_CONTACT.test(text);
  if (!secrets && !contacts) return text;
  const masked = new Uint8Array(text.length);
  let any = false;
  const patterns = [...(secrets ? SECRET_PATTERNS : []), ...(contacts ? CONTACT_PATTERNS : [])];
  for (const pattern of patterns) {
    pattern.regex.lastIndex = 0;
    for (let m = pattern.regex.exec(text); m; m = pattern.regex.exec(text)) {
      if (m[0].length === 0) {
        pattern.regex.lastIndex++;
        continue;
      }
      const spans = pattern.spans ? pattern.spans(m) : [[pattern.keep ?? 0, m[0].length] as const];
      for (const [from, to] of spans ?? []) {
        for (let i = m.index + from; i < m.index + to; i++) masked[i] = 1;
        any ||= to > from;
      }
    }
  }
  if (!any) return text;
  let out = '';
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === '\\') {
      // An escape: the backslash and what it escapes are kept (four hex digits after `\u`).
      const skip = text[i + 1] === 'u' ? 5 : 1;
      out += text.slice(i, i + 1 + skip);
      i += skip;
      continue;
    }
    out += masked[i] && !/\s/.test(c) ? MASK : c;
  }
  return out;
}

/** A JSON value with every string in it masked (`maskText`); the value is not changed. */
export function maskDeep<T>(value: T, opts: MaskOptions = {}): T {
  if (typeof value === 'string') return maskText(value, opts) as T;
  if (Array.isArray(value)) {
    let changed = false;
    const out = value.map((v) => {
      const m = maskDeep(v, opts);
      changed ||= m !== v;
      return m;
    });
    return (changed ? out : value) as T;
  }
  if (value && typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype) {
    let changed = false;
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
      const m = maskDeep(v, opts);
      changed ||= m !== v;
      out[k] = m;
    }
    return (changed ? out : value) as T;
  }
  return value;
}

/**
 * A stored row with its text masked (message text and text parts, tool arguments and results,
 * custom values, interrupts, error messages), every text keeping its length: what the run recorder
 * writes (`RecorderOptions.storedForm`). The event itself is not changed.
 */
export function maskStoredEvent(event: StoredEvent, opts: MaskOptions = {}): StoredEvent {
  switch (event.type) {
    case 'TEXT_MESSAGE': {
      const content = maskText(event.content, opts);
      const parts = event.parts?.map((p) => (p.type === 'text' ? { ...p, text: maskText(p.text, opts) } : p));
      return { ...event, content, ...(parts ? { parts } : {}) };
    }
    case 'TOOL_CALL':
      return { ...event, args: maskText(event.args, opts) };
    case 'TOOL_CALL_RESULT':
      return { ...event, content: maskText(event.content, opts) };
    case 'CUSTOM':
      return { ...event, value: maskDeep(event.value, opts) };
    case 'RUN_FINISHED':
      return event.outcome ? { ...event, outcome: maskDeep(event.outcome, opts) } : event;
    case 'RUN_ERROR':
      return { ...event, message: maskText(event.message, opts) };
    default:
      return event;
  }
}
