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
    en: 'You linked a different account from the one to reconnect. It will be saved as a new account; the other one is unchanged.',
    es: 'Vinculaste una cuenta distinta de la que ibas a reconectar. Se guardará como una cuenta nueva; la otra no cambia.',
  },
  different: {
    en: 'You linked a different account from the one to reconnect. It is used for this purchase only; the other one is unchanged.',
    es: 'Vinculaste una cuenta distinta de la que ibas a reconectar. Se usa solo para esta compra; la otra no cambia.',
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
  const key = reconnect?.differentAccount ? (savedAccount ? 'differentSaved' : 'different')
    : savedAccount?.reauthorized ? 'reconnected'
    : savedAccount ? 'saved'
    : undefined;
  return key && NOTES[key][shopperLanguage(language)];
}
