// ESLint over fleet's TypeScript: typescript-eslint's type-checked rules (recommendedTypeChecked). One TypeScript
// program, test/tsconfig.json, covers src/, test/ and bench/ with the compiler options they build with, so every file
// is checked with the types it really has. Every rule turned off or narrowed below says why beside it.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import { floorsConfig } from './scripts/eslint-floors.mjs';

export default tseslint.config(
  // Built output, and the JavaScript of the build scripts and launcher (bin/, scripts/, plain .mjs/.cjs): those are
  // not in the TypeScript program, so the type-checked rules cannot read them; Prettier still formats them.
  { ignores: ['dist/**', 'node_modules/**', '**/*.cjs', '**/*.mjs', '**/*.js'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { project: ['./test/tsconfig.json'], tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      // fleet strips control characters and ANSI escapes from what servers, plugins and files send before it reaches a
      // terminal (docs/security.md); those regular expressions name control characters on purpose.
      'no-control-regex': 'off',
      // An async function without an await still turns a throw into a rejected promise. Provider and codec methods are
      // async to keep that contract for their callers (which catch rejections, not throws) even where one
      // implementation happens not to await; removing `async` would change behaviour, not style.
      '@typescript-eslint/require-await': 'off',
      // A promise rejected with what was caught passes the original failure on unchanged, as a rethrow does; wrapping
      // it would hide its kind and code from the caller that sorts failures.
      '@typescript-eslint/prefer-promise-reject-errors': [
        'error',
        { allowThrowingAny: true, allowThrowingUnknown: true },
      ],
      // `const { secret: _secret, ...rest } = o` is how fleet drops a field before output; the underscore says so.
      '@typescript-eslint/no-unused-vars': [
        'error',
        { ignoreRestSiblings: true, varsIgnorePattern: '^_', argsIgnorePattern: '^_', caughtErrors: 'none' },
      ],
    },
  },
  {
    files: ['test/**/*.ts', 'bench/**/*.ts'],
    rules: {
      // Tests read fleet's -o json output, Kubernetes objects and fixtures as untyped JSON and assert their shape field by
      // field; declaring a type for each would restate the very shapes the assertions check, and a wrong one would hide
      // what the assertion is for. src/ keeps these rules.
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      // Tests save a method (process.stdout.write, a prototype's function) to put it back afterwards; they call it
      // with the right `this` through .call or by reassigning it to its owner.
      '@typescript-eslint/unbound-method': 'off',
      // node:test runs every test()/describe()/it() it was given and awaits it; their promises are the runner's.
      '@typescript-eslint/no-floating-promises': [
        'error',
        {
          allowForKnownSafeCalls: [
            { from: 'package', package: 'node:test', name: ['test', 'describe', 'it', 'suite', 'before', 'after'] },
          ],
        },
      ],
    },
  },
  // The floors of docs/architecture.md that read code: output only from cli/, user files read only in base/.
  ...floorsConfig,
);
