// The shopper-ready words of an outcome, in the verification's language (English or Spanish): the proxy
// knows the language, so the element only renders them (each word in the element's bundle costs every
// merchant's shoppers bytes). Known failure codes are translated; any other failure gets the proxy's
// general words. The provider's own message never reaches the browser (it may echo what it was sent,
// upstream/provider-text.ts): it stays on the server (the log, onOutcome).

type Lang = 'en' | 'es';

const FAILURES: Record<string, Record<Lang, string>> = {
  ACCOUNT_NOT_VERIFIED: {
    en: 'Your bank couldn’t verify this account. Try another account, or choose another way to pay.',
    es: 'Tu banco no pudo verificar esta cuenta. Prueba con otra cuenta o elige otra forma de pago.',
  },
  ACCOUNT_LOCKED: {
    en: 'This account is locked at your bank. Link another account, or choose another way to pay; your bank can unlock this one.',
    es: 'Esta cuenta está bloqueada en tu banco. Vincula otra cuenta o elige otra forma de pago; tu banco puede desbloquearla.',
  },
  CONSUMER_CANCELLED: {
    en: 'You cancelled at your bank, so no account was linked.',
    es: 'Cancelaste en tu banco, así que no se vinculó ninguna cuenta.',
  },
  BANK_STEP_ELSEWHERE: {
    en: 'The bank step was finished in another browser, so for your safety no account was linked. Try again, and finish at your bank in this browser.',
    es: 'El paso del banco se terminó en otro navegador, así que por tu seguridad no se vinculó ninguna cuenta. Inténtalo de nuevo y termina en tu banco en este navegador.',
  },
  CANCELLED: {
    en: 'Bank linking was cancelled, so no account was linked.',
    es: 'Se canceló la vinculación bancaria, así que no se vinculó ninguna cuenta.',
  },
};

/** Said for a failure whose code the proxy has no words for. */
const GENERIC_FAILURE: Record<Lang, string> = {
  en: 'Your bank couldn’t link this account. Choose another way to pay, or try again.',
  es: 'Tu banco no pudo vincular esta cuenta. Elige otra forma de pago o inténtalo de nuevo.',
};

const ACCOUNT_TYPES: Record<string, Record<Lang, string>> = {
  CHECKING: { en: 'Checking', es: 'Corriente' },
  SAVINGS: { en: 'Savings', es: 'Ahorros' },
};

/** Spoken, Spanish names the account itself: "terminada en" then agrees with "cuenta" ("Ahorros terminada en" does not). */
const SPOKEN_TYPES: Record<string, Partial<Record<Lang, string>>> = {
  CHECKING: { es: 'Cuenta corriente' },
  SAVINGS: { es: 'Cuenta de ahorros' },
};

/** Each type's English word as a whole word, compiled once (this runs for every success published). */
const ENGLISH_TYPE_WORDS: Record<string, RegExp> = Object.fromEntries(
  Object.entries(ACCOUNT_TYPES).map(([type, words]) => [type, new RegExp(`\\b${words.en}\\b`, 'i')]),
);

const ENDING_IN: Record<Lang, string> = { en: 'ending in', es: 'terminada en' };

/** "es", "es-MX"… → es; anything else (or nothing) → en. */
export function shopperLanguage(language: string | undefined): Lang {
  return language && /^es(-|$)/i.test(language) ? 'es' : 'en';
}

/** The failure as the shopper reads it, and the language of that text. */
export function failureWords(code: string, language: string | undefined): { text: string; lang: string } {
  const lang = shopperLanguage(language);
  return { text: (FAILURES[code.toUpperCase()] ?? GENERIC_FAILURE)[lang], lang };
}

/** A failure code the browser may see: the provider's when it is shaped like a code, else this one. */
export const UNKNOWN_FAILURE_CODE = 'VERIFICATION_FAILED';
const FAILURE_CODE = /^[A-Za-z][A-Za-z0-9_.-]{0,63}$/;

/** The provider's code if it is code-shaped (a word, not a sentence that could echo a value). */
export function browserFailureCode(code: string): string {
  return FAILURE_CODE.test(code) ? code : UNKNOWN_FAILURE_CODE;
}

/** A run of mask characters followed by the digits it leaves visible: "••••4321", "****4321", "xxxx 4321", "…4321". */
const MASKED_NUMBER = /(?:[•*●]{2,}|[xX]{3,}|…)\s*(\d{2,})/;

/**
 * The account line as shown ("Corriente ••••4321": the type word in the shopper's language, never twice)
 * and as spoken ("Cuenta corriente terminada en 4321": a screen reader reads "••••" as "bullet bullet…").
 */
export function accountWords(
  accountLabel: string,
  fiAccountType: string,
  language: string | undefined,
): { displayLabel: string; spokenLabel: string } {
  const lang = shopperLanguage(language);
  const type = ACCOUNT_TYPES[fiAccountType.toUpperCase()];
  const typeWord = type?.[lang] ?? fiAccountType;
  let displayLabel = accountLabel;
  // The provider writes the label in English: its type word is swapped for the shopper's, not repeated.
  const englishWord = ENGLISH_TYPE_WORDS[fiAccountType.toUpperCase()];
  if (englishWord?.test(accountLabel)) displayLabel = accountLabel.replace(englishWord, typeWord);
  else if (typeWord && !accountLabel.toLowerCase().includes(typeWord.toLowerCase()))
    displayLabel = [accountLabel, typeWord].filter(Boolean).join(' · ');
  const masked = MASKED_NUMBER.exec(displayLabel);
  // Nothing but the type word and the number: said in the language's order ("Cuenta de ahorros terminada en 8765").
  const bare = type && masked && !displayLabel.replace(masked[0], '').replace(typeWord, '').replace(' · ', '').trim();
  const spokenLabel = bare
    ? `${SPOKEN_TYPES[fiAccountType.toUpperCase()]?.[lang] ?? typeWord} ${ENDING_IN[lang]} ${masked[1]}`
    : displayLabel.replace(MASKED_NUMBER, `${ENDING_IN[lang]} $1`).replace(' · ', ', ');
  return { displayLabel, spokenLabel };
}
