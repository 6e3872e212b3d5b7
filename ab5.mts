import { renderSafeMarkdown as now } from '/work/main/lib/markdown.ts'
import { renderSafeMarkdown as old } from '/tmp/old/lib/markdown.ts'
import { README, pathologicalCases } from '/work/main/bench/markdown.ts'
const docs: Array<[string, string]> = [['README 5K', README], ['README 256K', README.repeat(53)], ['items 256K', pathologicalCases.find((x) => x.name === 'many list items')!.generate(262144)], ['saw 1M', pathologicalCases.find((x) => x.name === 'sawtooth of nested lists')!.generate(1048576)]]
for (const [name, doc] of docs) {
  const best: Record<string, number> = {}
  const n = Math.max(2, Math.round(8 * 1024 * 1024 / doc.length))
  for (let round = 0; round < 3; round++) for (const [label, f] of [['old', old], ['now', now]] as const) {
    f(doc); const t = performance.now(); for (let i = 0; i < n; i++) f(doc); best[label] = Math.min(best[label] ?? Infinity, (performance.now() - t) / n)
  }
  console.log(name, Object.entries(best).map(([k, v]) => `${k} ${v.toFixed(2)} ms`).join('  '), 'now/old', (best.now / best.old).toFixed(2))
}
