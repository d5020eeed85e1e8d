import 'server-only';
import { randomFillSync } from 'node:crypto';

const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';
const RANDOM_PER_ID = 14;

// Random bytes are drawn from the system 4 KiB at a time (a run makes dozens of ids; one call
// into the system per id showed in profiles). Each byte is used once.
const pool = Buffer.alloc(4096);
let poolAt = pool.length;

/** Time-ordered, URL-safe id (10 chars of milliseconds + 14 random), sortable as text. */
export function newId(prefix = ''): string {
  let t = Date.now();
  let time = '';
  for (let i = 0; i < 10; i++) {
    time = ALPHABET[t % 32] + time;
    t = Math.floor(t / 32);
  }
  if (poolAt + RANDOM_PER_ID > pool.length) {
    randomFillSync(pool);
    poolAt = 0;
  }
  let rand = '';
  for (let i = 0; i < RANDOM_PER_ID; i++) rand += ALPHABET[pool[poolAt + i]! % 32];
  poolAt += RANDOM_PER_ID;
  return prefix + time + rand;
}
