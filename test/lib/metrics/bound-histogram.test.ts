import fc from 'fast-check'
import { Histogram, Registry, type RegistryContentType } from 'prom-client'
import t from 'tap'
import { BoundHistogram } from '../../../lib/metrics/bound-histogram.js'

const BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]
const LABEL_SETS = [
  { method: 'GET', route: '/api/date/suninfo', status_code: '200' },
  { method: 'GET', route: '/api/date/suninfo', status_code: '400' },
  { method: 'POST', route: '/api/markdown/parse', status_code: '200' },
  { method: 'GET', route: '/api/user/list', status_code: 'a "quoted" \\ value\n' }
]

/** prom-client's Histogram and a BoundHistogram, each in a registry of its own, fed the same observations. */
function both (contentType: RegistryContentType): {
  observe: (labelSet: number, value: number) => void
  texts: () => Promise<[string, string]>
} {
  const stock = new Registry<RegistryContentType>()
  const bound = new Registry<RegistryContentType>()
  stock.setContentType(contentType)
  bound.setContentType(contentType)
  const options = { name: 'http_request_duration_seconds', help: 'request duration in seconds', buckets: BUCKETS }
  const histogram = new Histogram({ ...options, labelNames: ['method', 'route', 'status_code'], registers: [] })
  stock.registerMetric(histogram)
  const boundHistogram = new BoundHistogram({ ...options, registers: [bound] })
  const observers = new Map<number, (value: number) => void>()
  return {
    observe (labelSet, value) {
      histogram.labels(LABEL_SETS[labelSet]!).observe(value)
      let observer = observers.get(labelSet)
      if (observer === undefined) observers.set(labelSet, observer = boundHistogram.series(LABEL_SETS[labelSet]!))
      observer(value)
    },
    texts: async () => [await bound.metrics(), await stock.metrics()]
  }
}

t.test('the registry writes it exactly as prom-client\'s Histogram, in both formats, for any observations', async (t) => {
  const observation = fc.tuple(
    fc.nat({ max: LABEL_SETS.length - 1 }),
    fc.oneof(fc.constantFrom(...BUCKETS, 0, 11), fc.double({ min: 0, max: 20, noNaN: true }))
  )
  for (const contentType of [Registry.PROMETHEUS_CONTENT_TYPE, Registry.OPENMETRICS_CONTENT_TYPE]) {
    const run = await fc.check(fc.asyncProperty(fc.array(observation, { maxLength: 200 }), async (observations) => {
      const { observe, texts } = both(contentType)
      for (const [labelSet, value] of observations) observe(labelSet, value)
      const [actual, expected] = await texts()
      return actual === expected
    }), { numRuns: 200 })
    t.notOk(run.failed, `${contentType}: ${JSON.stringify(run.counterexample)}`)
  }
})

t.test('a value on a bound counts in that bound\'s bucket (le is "less or equal")', async (t) => {
  const registry = new Registry()
  const histogram = new BoundHistogram({ name: 'h', help: 'h', buckets: [1, 2], registers: [registry] })
  const observe = histogram.series({ route: '/a' })
  observe(1)
  observe(2)
  observe(3)
  const text = await registry.metrics()
  t.match(text, 'h_bucket{le="1",route="/a"} 1\nh_bucket{le="2",route="/a"} 2\nh_bucket{le="+Inf",route="/a"} 3\n')
  t.match(text, 'h_sum{route="/a"} 6\nh_count{route="/a"} 3')
})

t.test('a label set bound twice is one series, as prom-client keeps it', async (t) => {
  const registry = new Registry()
  const histogram = new BoundHistogram({ name: 'h', help: 'h', buckets: [1], registers: [registry] })
  histogram.series({ route: '/a', method: 'GET' })(0.5)
  histogram.series({ method: 'GET', route: '/a' })(2)
  const text = await registry.metrics()
  t.equal(text.split('\n').filter((line) => line.startsWith('h_count')).length, 1, 'one series')
  t.match(text, 'h_count{route="/a",method="GET"} 2')
})
