// Flat config: typescript-eslint's recommended rules on every TypeScript file.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'test-results/**', 'coverage/**', 'test/package/fixtures/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
    },
  },
  {
    // The widget is browser code: it must never reach into the proxy or the sandbox (contracts/ it may).
    files: ['widget/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: ['**/proxy/**', '**/demo/**', '**/sandbox/**', 'node:*'] }],
    },
  },
  {
    // Two independent readings of the upstream API (docs/UPSTREAM.md): the proxy and the sandbox import nothing of each other.
    files: ['proxy/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: ['**/demo/**', '**/sandbox/**', '**/widget/**'] }] },
  },
  {
    // The sandbox stays independent: not even the shared contracts (it reads the upstream API on its own).
    files: ['sandbox/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: ['**/proxy/**', '**/demo/**', '**/widget/**', '**/contracts/**'] },
      ],
    },
  },
  {
    // Rules shared by the element and the proxy (browser and Node): they import nothing at all.
    files: ['contracts/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: ['*'] }] },
  },
);
