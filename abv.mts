import { renderSafeMarkdown as old } from '/tmp/old/lib/markdown.ts'
import { README, pathologicalCases } from '/work/main/bench/markdown.ts'
const names = process.argv.slice(2)
const variants: Array<[string, (s: string) => string]> = [['old', old]]
for (const n of names) variants.push([n, (await import(`/work/main/lib/_var_${n}.ts`)).renderSafeMarkdown])
const docs: Array<[string, string]> = [['README 5K', README], ['README 256K', README.repeat(53)], ['items 256K', pathologicalCases.find((x) => x.name === 'many list items')!.generate(262144)], ['saw 1M', pathologicalCases.find((x) => x.name === 'sawtooth of nested lists')!.generate(1048576)]]
for (const [name, doc] of docs) {
  const best: Record<string, number> = {}
  const n = Math.max(2, Math.round(4 * 1024 * 1024 / doc.length))
  for (let round = 0; round < 7; round++) for (const [label, f] of variants) {
    f(doc); const t = performance.now(); for (let i = 0; i < n; i++) f(doc); best[label] = Math.min(best[label] ?? Infinity, (performance.now() - t) / n)
  }
  console.log(name.padEnd(12), Object.entries(best).map(([k, v]) => `${k} ${(v / best.old!).toFixed(2)}`).join('  '), `(old ${best.old!.toFixed(2)} ms)`)
}
