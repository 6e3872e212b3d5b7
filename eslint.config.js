// The style Fastify itself is linted with (neostandard, TypeScript aware), and type-checked rules that
// catch real bugs: a promise nobody awaits or handles, one passed where a callback's result is ignored,
// an await on what is no promise. `npm run check` runs it; a finding fails CI.
import neostandard, { plugins, resolveIgnoresFromGitignore } from 'neostandard'

const typescript = plugins['typescript-eslint']

export default [
  { linterOptions: { reportUnusedDisableDirectives: 'error' } },
  ...neostandard({ ts: true, ignores: [...resolveIgnoresFromGitignore(), '.scratch/'] }),
  {
    rules: {
      // `void promise` is how no-floating-promises is told a promise is left on purpose.
      'no-void': ['error', { allowAsStatement: true }],
      // It cannot see a flag that a callback sets: every finding here was a load loop a timer stops.
      'no-unmodified-loop-condition': 'off',
      // TypeBox's pattern names a schema and its Static type alike; TypeScript refuses real redeclarations.
      '@typescript-eslint/no-redeclare': 'off'
    }
  },
  {
    // Lines of the source within 120 characters (issue #60); tests, benchmarks and scripts may hold longer samples.
    files: ['*.ts', 'plugins/**/*.ts', 'routes/**/*.ts', 'schemas/**/*.ts', 'lib/**/*.ts'],
    rules: { '@stylistic/max-len': ['error', { code: 120, ignoreUrls: true, ignoreRegExpLiterals: true }] }
  },
  {
    // prom-client metrics register themselves in their registry when they are made.
    files: ['plugins/app/metrics.ts', 'plugins/app/health.ts'],
    rules: { 'no-new': 'off' }
  },
  {
    // Tests hold code samples with template literals in strings.
    files: ['test/**/*.ts'],
    rules: { 'no-template-curly-in-string': 'off' }
  },
  {
    files: ['**/*.ts'],
    languageOptions: {
      parser: typescript.parser,
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname }
    },
    rules: {
      // tap runs the subtests a test file queues with t.test without awaiting them, in order.
      '@typescript-eslint/no-floating-promises': ['error', {
        allowForKnownSafeCalls: [{ from: 'package', name: ['test', 'skip', 'todo', 'only'], package: '@tapjs/test' }]
      }],
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/await-thenable': 'error'
    }
  }
]
