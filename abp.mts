import { README } from '/work/main/bench/markdown.ts'
const { renderSafeMarkdown } = await import(`/work/main/lib/${process.argv[2]}`)
for (let i = 0; i < 40000; i++) renderSafeMarkdown(README)
