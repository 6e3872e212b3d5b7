"""Moves files (git mv) and rewrites every relative import and repo-path mention to follow."""
import os, re, subprocess, sys
ROOT = '/work/main'
os.chdir(ROOT)
MOVES = {
  # HTTP and Fastify out of lib/
  'lib/access-log.ts': 'plugins/access-log.ts',
  'lib/tracing.ts': 'plugins/tracing.ts',
  'lib/http-caching.ts': 'plugins/http-caching.ts',
  'lib/openapi-examples.ts': 'plugins/openapi-examples.ts',
  # the domain, by what it holds
  'lib/failure-counter.ts': 'lib/auth/failure-counter.ts',
  'lib/open-sessions.ts': 'lib/auth/open-sessions.ts',
  'lib/passwords.ts': 'lib/auth/passwords.ts',
  'lib/session-pruner.ts': 'lib/auth/session-pruner.ts',
  'lib/tokens.ts': 'lib/auth/tokens.ts',
  'lib/redact.ts': 'lib/auth/redact.ts',
  'lib/activity.ts': 'lib/users/activity.ts',
  'lib/demo-users.ts': 'lib/users/demo-users.ts',
  'lib/seed-users.ts': 'lib/users/seed-users.ts',
  'lib/user-directory.ts': 'lib/users/directory.ts',
  'lib/users.ts': 'lib/users/listing.ts',
  'lib/fair-share.ts': 'lib/fair-share/quotas.ts',
  'lib/shared-counts.ts': 'lib/fair-share/shared-counts.ts',
  'lib/store-outage-log.ts': 'lib/store/outage-log.ts',
  'lib/sun.ts': 'lib/sun/events.ts',
  'lib/markdown.ts': 'lib/markdown/render.ts',
  'plugins/markdown-render-task.ts': 'lib/markdown/render-task.ts',
  # tests mirror lib/, fixtures beside them
  'test/lib/activity.test.ts': 'test/lib/users/activity.test.ts',
  'test/lib/seed-users.test.ts': 'test/lib/users/seed-users.test.ts',
  'test/lib/user-directory.test.ts': 'test/lib/users/directory.test.ts',
  'test/lib/users.test.ts': 'test/lib/users/listing.test.ts',
  'test/lib/counters-feed.test.ts': 'test/lib/store/counters-feed.test.ts',
  'test/lib/retry-while-busy.test.ts': 'test/lib/store/retry-while-busy.test.ts',
  'test/lib/store.test.ts': 'test/lib/store/store.test.ts',
  'test/lib/failure-counter.test.ts': 'test/lib/auth/failure-counter.test.ts',
  'test/lib/redact.test.ts': 'test/lib/auth/redact.test.ts',
  'test/lib/session-pruner.test.ts': 'test/lib/auth/session-pruner.test.ts',
  'test/lib/tokens.test.ts': 'test/lib/auth/tokens.test.ts',
  'test/lib/fair-share.test.ts': 'test/lib/fair-share/quotas.test.ts',
  'test/lib/shared-counts.test.ts': 'test/lib/fair-share/shared-counts.test.ts',
  'test/lib/sun.test.ts': 'test/lib/sun/events.test.ts',
  'test/lib/sun-days.ts': 'test/lib/sun/days.ts',
  'test/lib/markdown.test.ts': 'test/lib/markdown/render.test.ts',
  'test/lib/markdown-github.test.ts': 'test/lib/markdown/github.test.ts',
  'test/lib/markdown-nesting.test.ts': 'test/lib/markdown/nesting.test.ts',
  'test/lib/markdown-raw-html.test.ts': 'test/lib/markdown/raw-html.test.ts',
  'test/lib/markdown-code.test.ts': 'test/lib/markdown/code-highlight.test.ts',
  'test/lib/markdown-math.test.ts': 'test/lib/markdown/math.test.ts',
  'test/lib/markdown-hostile.ts': 'test/lib/markdown/hostile.ts',
  'test/lib/markdown-words.ts': 'test/lib/markdown/words.ts',
}
HELPERS = ['commonmark-normalize.ts', 'conformance.ts', 'fair-share-load.ts', 'fetch-globals.d.ts', 'forge.ts', 'helper.ts',
  'http-request.ts', 'markdown-corpus.ts', 'meridian.ts', 'postgres.ts', 'redis-6.2.ts', 'redis-server.ts', 'repository.ts',
  'requirements.ts', 'tcp-proxy.ts', 'throw-on-sigwinch.mjs', 'uninstrumented-children.mjs']
for helper in HELPERS:
  MOVES['test/' + helper] = 'test/support/' + helper

missing = [old for old in MOVES if not os.path.exists(old)]
if missing: sys.exit(f'missing: {missing}')
clash = [new for new in MOVES.values() if os.path.exists(new)]
if clash: sys.exit(f'exists: {clash}')

tracked = subprocess.run(['git', 'ls-files'], capture_output=True, text=True, check=True).stdout.split()
untracked = subprocess.run(['git', 'ls-files', '--others', '--exclude-standard'], capture_output=True, text=True, check=True).stdout.split()
files = [f for f in tracked + untracked if os.path.exists(f)]
code_files = [f for f in files if re.search(r'\.(ts|mts|mjs|js|cjs)$', f) and not f.startswith('test/generated/')]

def new_path(old):
  return MOVES.get(old, old)

SPEC = re.compile(r"""((?:from|import)\s*\(?\s*|new URL\(\s*|require\(\s*)(['"])(\.{1,2}/[^'"]+)\2""")

def resolve_target(importer_old, spec):
  base = os.path.normpath(os.path.join(os.path.dirname(importer_old), spec))
  for candidate in [base, re.sub(r'\.js$', '.ts', base), re.sub(r'\.js$', '.d.ts', base), re.sub(r'\.mjs$', '.mts', base)]:
    if candidate in MOVES or os.path.exists(candidate): return candidate, base
  return None, base

rewrites = {}
for f in code_files:
  text = open(f).read()
  importer_new = new_path(f)
  def repl(m):
    target, written = resolve_target(f, m.group(3))
    if target is None: return m.group(0)
    target_new = new_path(target)
    if target_new == target and importer_new == f: return m.group(0)
    # keep the written extension (.js for a .ts source)
    ext_written = os.path.splitext(written)[1]
    target_new_written = os.path.splitext(target_new)[0] + ext_written if target != written else target_new
    if target.endswith('.d.ts') and written.endswith('.js'):
      target_new_written = target_new[:-5] + '.js'
    rel = os.path.relpath(target_new_written, os.path.dirname(importer_new))
    if not rel.startswith('.'): rel = './' + rel
    return m.group(1) + m.group(2) + rel + m.group(2)
  new_text = SPEC.sub(repl, text)
  if new_text != text: rewrites[f] = new_text

for f, text in rewrites.items(): open(f, 'w').write(text)
for old, new in MOVES.items():
  os.makedirs(os.path.dirname(new), exist_ok=True)
  subprocess.run(['git', 'mv', old, new], check=True)

# Repo-relative mentions in docs, comments, configs: longest first, whole paths only.
text_files = [new_path(f) for f in files if re.search(r'\.(ts|mts|mjs|js|md|json|yaml|yml|sh|conf)$|^\.ci/run$|Dockerfile$', f) and not f.startswith('test/generated/') and f not in ('package-lock.json', 'openapi.json')]
pairs = sorted(MOVES.items(), key=lambda p: -len(p[0]))
pattern = re.compile(r'(?:(?<=[\s\'"`(=]\./)|(?<![\w./-]))(' + '|'.join(re.escape(old) for old, _ in pairs) + r')(?![\w-])')
for f in text_files:
  if not os.path.exists(f): continue
  text = open(f).read()
  new_text = pattern.sub(lambda m: MOVES[m.group(1)], text)
  if new_text != text: open(f, 'w').write(new_text)
print(f'{len(MOVES)} moved, {len(rewrites)} files had imports rewritten')
