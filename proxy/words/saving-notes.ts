// What the success screen adds for a returning shopper, in the verification's language: that the account
// will be saved, that a reconnect renewed the saved account, or that the bank linked a different account
// than the one to reconnect (accounts/reconnect.ts). Sent with the outcome, like its other words, so they
// cost the element's bundle nothing.
import { shopperLanguage } from './outcomes.ts';

const NOTES = {
  saved: {
    en: 'This account will be saved for your next purchases.',
    es: 'Esta cuenta se guardará para tus próximas compras.',
  },
  reconnected: {
    en: 'Your saved account is reconnected.',
    es: 'Tu cuenta guardada está reconectada.',
  },
  differentSaved: {
    en: 'This isn’t the account you were reconnecting: it will be saved as a new account, and the other one still needs reconnecting.',
    es: 'Esta no es la cuenta que ibas a reconectar: se guardará como una cuenta nueva, y la otra todavía necesita reconectarse.',
  },
  different: {
    en: 'This isn’t the account you were reconnecting: it will be used for this purchase only, and the other one still needs reconnecting.',
    es: 'Esta no es la cuenta que ibas a reconectar: se usará solo para esta compra, y la otra todavía necesita reconectarse.',
  },
};

/** The success's note for the shopper, or undefined when there is nothing to add. */
/** What of a success's saved account and reconnect the note depends on (storage/saved-accounts.ts has their whole shapes). */
interface SavingOutcome {
  savedAccount?: { reauthorized?: true } | undefined;
  reconnect?: { differentAccount: boolean } | undefined;
}

export function savingNote(outcome: SavingOutcome, language: string | undefined): string | undefined {
  const { savedAccount, reconnect } = outcome;
  const key = reconnect?.differentAccount
    ? savedAccount
      ? 'differentSaved'
      : 'different'
    : savedAccount?.reauthorized
      ? 'reconnected'
      : savedAccount
        ? 'saved'
        : undefined;
  return key && NOTES[key][shopperLanguage(language)];
}
