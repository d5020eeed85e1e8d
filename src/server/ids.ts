import 'server-only';
import { randomBytes } from 'node:crypto';

const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';

/** Time-ordered, URL-safe id (10 chars of milliseconds + 14 random), sortable as text. */
export function newId(prefix = ''): string {
  let t = Date.now();
  let time = '';
  for (let i = 0; i < 10; i++) {
    time = ALPHABET[t % 32] + time;
    t = Math.floor(t / 32);
  }
  const bytes = randomBytes(14);
  let rand = '';
  for (let i = 0; i < 14; i++) rand += ALPHABET[bytes[i]! % 32];
  return prefix + time + rand;
}
