// The words the browser gets with an outcome (proxy/sessions/shopper-words.ts): known failure codes in
// the shopper's language, the provider's own text marked as its language, the account line as shown and
// as a screen reader should say it.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { accountWords, failureWords } from '../../../proxy/sessions/shopper-words.ts';

describe('shopper words', () => {
  test('translates the known failure codes into English and Spanish', () => {
    for (const code of ['ACCOUNT_NOT_VERIFIED', 'ACCOUNT_LOCKED', 'CONSUMER_CANCELLED', 'CANCELLED']) {
      const en = failureWords(code, 'provider text', 'en-US');
      const es = failureWords(code, 'provider text', 'es');
      assert.equal(en.lang, 'en');
      assert.equal(es.lang, 'es');
      assert.notEqual(en.text, 'provider text', code);
      assert.notEqual(es.text, en.text, code);
    }
    assert.match(failureWords('ACCOUNT_LOCKED', 'This account is locked.', 'es-MX').text, /bloqueada/);
  });

  test('shows an unknown code’s provider text marked as English, even to a Spanish shopper', () => {
    assert.deepEqual(failureWords('BANK_DOWN', 'The bank is unavailable.', 'es'), { text: 'The bank is unavailable.', lang: 'en' });
  });

  test('says something in the shopper’s language when an unknown failure has no text', () => {
    const { text, lang } = failureWords('BANK_DOWN', '', 'es');
    assert.equal(lang, 'es');
    assert.match(text, /banco/);
  });

  test('swaps the label’s English type word for the shopper’s and never repeats it', () => {
    assert.deepEqual(accountWords('Checking ••••4321', 'CHECKING', 'es'), { displayLabel: 'Corriente ••••4321', spokenLabel: 'Cuenta corriente terminada en 4321' });
    assert.deepEqual(accountWords('Checking ••••4321', 'CHECKING', 'en'), { displayLabel: 'Checking ••••4321', spokenLabel: 'Checking ending in 4321' });
    assert.deepEqual(accountWords('Savings ****9876', 'savings', undefined), { displayLabel: 'Savings ****9876', spokenLabel: 'Savings ending in 9876' });
  });

  test('adds the type word to a label without one, and keeps an unknown type as the provider wrote it', () => {
    // Spanish that agrees: "Cuenta de ahorros terminada en…", not "Ahorros terminada en…".
    assert.deepEqual(accountWords('••••4321', 'SAVINGS', 'es'), { displayLabel: '••••4321 · Ahorros', spokenLabel: 'Cuenta de ahorros terminada en 4321' });
    assert.deepEqual(accountWords('Savings ••••8765', 'SAVINGS', 'es'), { displayLabel: 'Ahorros ••••8765', spokenLabel: 'Cuenta de ahorros terminada en 8765' });
    assert.deepEqual(accountWords('Money Market ••••1111', 'MONEY_MARKET', 'en'), { displayLabel: 'Money Market ••••1111 · MONEY_MARKET', spokenLabel: 'Money Market ending in 1111, MONEY_MARKET' });
    assert.deepEqual(accountWords('My account', '', 'en'), { displayLabel: 'My account', spokenLabel: 'My account' });
  });
});
