import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/', 'dist-test/', 'node_modules/', 'examples/', 'packages/svc-agent-sdk/', 'data/', 'coverage/', '.bench/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { console: 'readonly', process: 'readonly' } },
    rules: {
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-constant-condition': ['error', { checkLoops: false }],
    },
  },
  {
    // "Under 400 lines" counts every physical line, as `wc -l` does: blank lines and comments too.
    files: ['src/**/*.ts', 'supervisors/**/*.ts'],
    rules: { 'max-lines': ['error', { max: 399, skipBlankLines: false, skipComments: false }] },
  },
  {
    // The dashboard's browser modules: tsc checks them (checkJs), browser globals included.
    files: ['dashboard/**/*.js'],
    rules: { 'no-undef': 'off' },
  },
);
