// Whose order a hosted page is for, said so the person who opens it can tell "this is not me" while a
// forwarded link's reader learns as little as possible: the first name, the last name's initial and the
// e-mail's first character and domain ("Ana L. · a•••@example.com").

/** The consumer as a link session declares them. */
export interface DeclaredConsumer {
  firstName: string;
  lastName: string;
  email: string;
}

/** The first character of a text, whole (a surrogate pair is one character). */
const initial = (text: string) => Array.from(text.trim())[0] ?? '';

/** `a•••@example.com`: the local part's first character, the domain as it is. */
export function maskedEmail(email: string): string {
  const at = email.lastIndexOf('@');
  return at <= 0 ? '•••' : `${initial(email.slice(0, at))}•••${email.slice(at)}`;
}

/** `Ana L. · a•••@example.com`. */
export function maskedConsumer(consumer: DeclaredConsumer): string {
  const last = initial(consumer.lastName);
  return `${consumer.firstName.trim()}${last ? ` ${last}.` : ''} · ${maskedEmail(consumer.email)}`;
}
