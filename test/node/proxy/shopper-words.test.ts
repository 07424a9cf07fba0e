// The words the browser gets with an outcome (proxy/words/outcomes.ts): known failure codes in
// the shopper's language, the proxy's general words for any other (never the provider's text), the account
// line as shown and as a screen reader should say it.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { accountWords, browserFailureCode, failureWords } from '../../../proxy/words/outcomes.ts';

describe('shopper words', () => {
  test('translates the known failure codes into English and Spanish', () => {
    for (const code of ['ACCOUNT_NOT_VERIFIED', 'ACCOUNT_LOCKED', 'CONSUMER_CANCELLED', 'CANCELLED']) {
      const en = failureWords(code, 'en-US');
      const es = failureWords(code, 'es');
      assert.equal(en.lang, 'en');
      assert.equal(es.lang, 'es');
      assert.notEqual(es.text, en.text, code);
    }
    assert.match(failureWords('ACCOUNT_LOCKED', 'es-MX').text, /bloqueada/);
  });

  test('says the proxy’s general words in the shopper’s language for an unknown code', () => {
    const { text, lang } = failureWords('BANK_DOWN', 'es');
    assert.equal(lang, 'es');
    assert.match(text, /banco/);
  });

  test('passes a code-shaped provider code, and replaces one that is a sentence or could carry a value', () => {
    assert.equal(browserFailureCode('ACCOUNT_LOCKED'), 'ACCOUNT_LOCKED');
    assert.equal(browserFailureCode('bank.down-2'), 'bank.down-2');
    assert.equal(browserFailureCode('token acct_123 refused'), 'VERIFICATION_FAILED');
    assert.equal(browserFailureCode('x'.repeat(65)), 'VERIFICATION_FAILED');
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
