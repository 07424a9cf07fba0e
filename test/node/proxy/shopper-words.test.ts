// The words the browser gets with an outcome (proxy/words/outcomes.ts): known failure codes in
// the shopper's language, the proxy's general words for any other (never the provider's text), the account
// line as shown and as a screen reader should say it.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { accountWords, browserFailureCode, failureWords } from '../../../proxy/words/outcomes.ts';
import { BANK_STEP_WORDS } from '../../../proxy/words/bank-step.ts';
import { savingNote } from '../../../proxy/words/saving-notes.ts';
import { hostedPageText } from '../../../proxy/words/hosted-page.ts';
import { formatAmount } from '../../../proxy/pages/hosted-page.ts';

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
    assert.deepEqual(accountWords('Checking ••••4321', 'CHECKING', 'es'), {
      displayLabel: 'Corriente ••••4321',
      spokenLabel: 'Cuenta corriente terminada en 4321',
    });
    assert.deepEqual(accountWords('Checking ••••4321', 'CHECKING', 'en'), {
      displayLabel: 'Checking ••••4321',
      spokenLabel: 'Checking ending in 4321',
    });
    assert.deepEqual(accountWords('Savings ****9876', 'savings', undefined), {
      displayLabel: 'Savings ****9876',
      spokenLabel: 'Savings ending in 9876',
    });
  });

  test('adds the type word to a label without one, and keeps an unknown type as the provider wrote it', () => {
    // Spanish that agrees: "Cuenta de ahorros terminada en…", not "Ahorros terminada en…".
    assert.deepEqual(accountWords('••••4321', 'SAVINGS', 'es'), {
      displayLabel: '••••4321 · Ahorros',
      spokenLabel: 'Cuenta de ahorros terminada en 4321',
    });
    assert.deepEqual(accountWords('Savings ••••8765', 'SAVINGS', 'es'), {
      displayLabel: 'Ahorros ••••8765',
      spokenLabel: 'Cuenta de ahorros terminada en 8765',
    });
    assert.deepEqual(accountWords('Money Market ••••1111', 'MONEY_MARKET', 'en'), {
      displayLabel: 'Money Market ••••1111 · MONEY_MARKET',
      spokenLabel: 'Money Market ending in 1111, MONEY_MARKET',
    });
    assert.deepEqual(accountWords('My account', '', 'en'), { displayLabel: 'My account', spokenLabel: 'My account' });
  });

  // Issue 42's words, in both languages.
  test("the bank step's words name the bank's page, never a tab (a phone or an app's browser has none)", () => {
    for (const lang of ['en', 'es'] as const) {
      for (const [key, words] of Object.entries(BANK_STEP_WORDS[lang]))
        assert.doesNotMatch(words, /\btab\b|pestaña/i, `${lang}.${key}`);
    }
    assert.equal(BANK_STEP_WORDS.en.showTab, 'Go to your bank');
    assert.equal(BANK_STEP_WORDS.es.showTab, 'Ir a tu banco');
    for (const lang of ['en', 'es'] as const)
      assert.doesNotMatch(hostedPageText(lang).explainer, /\btab\b|pestaña|opens|se abre/i, lang);
  });

  test('an expired bank session says why and that nothing was charged', () => {
    assert.match(BANK_STEP_WORDS.en.expiredHint, /before you finished at your bank.*Nothing was charged/);
    assert.match(BANK_STEP_WORDS.es.expiredHint, /antes de que acabaras en tu banco.*No se cobró nada/);
  });

  test('Spanish: one tense per sentence, the pronoun on the verb ("desbloquearla"), US amounts for US shoppers', () => {
    assert.match(failureWords('ACCOUNT_LOCKED', 'es').text, /tu banco puede desbloquearla\.$/);
    assert.match(BANK_STEP_WORDS.es.lostHint, /^No se perdió nada: si terminaste/);
    assert.match(BANK_STEP_WORDS.es.waitingHint, /cuando termines\.$/);
    assert.equal(formatAmount('42.50', 'USD', 'es'), '$42.50');
    assert.equal(formatAmount('42.50', 'USD', 'en'), '$42.50');
  });

  test('a reconnect that linked another account says so plainly, in one tense, in English and Spanish', () => {
    const different = { reconnect: { accountId: 'sa_1', differentAccount: true } };
    assert.equal(
      savingNote(different, 'en'),
      'This isn’t the account you were reconnecting: it will be used for this purchase only, and the other one still needs reconnecting.',
    );
    assert.equal(
      savingNote(different, 'es'),
      'Esta no es la cuenta que ibas a reconectar: se usará solo para esta compra, y la otra todavía necesita reconectarse.',
    );
  });

  test("US spelling in the hosted pages' words", () => {
    assert.equal(hostedPageText('en').unknownTitle, 'Link not recognized');
  });
});
