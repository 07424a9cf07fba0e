// Comparison of secrets (client secrets, consumerUrl tokens) in constant time, so response timing
// reveals nothing about how much of a guess matched.
import { createHash, timingSafeEqual } from 'node:crypto';

const digest = (value: string) => createHash('sha256').update(value).digest();

/** True when `given` equals `expected`; timing depends on neither. */
export function secretsMatch(given: string, expected: string): boolean {
  return timingSafeEqual(digest(given), digest(expected));
}
