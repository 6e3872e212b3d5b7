import type { Metric, Registry, RegistryContentType } from 'prom-client'

type Labels = Readonly<Record<string, string>>

export interface BoundHistogramOptions {
  name: string
  help: string
  /** Upper bounds, ascending; `+Inf` is added. */
  buckets: readonly number[]
  registers: ReadonlyArray<Registry<RegistryContentType>>
}

/** One label set's counts: per bucket (not cumulative, the last one past every bound), sum and count. */
class Series {
  readonly inBucket: Float64Array
  sum = 0
  count = 0

  constructor (readonly labels: Labels, buckets: number) {
    this.inBucket = new Float64Array(buckets + 1)
  }
}

/**
 * A histogram written by prom-client's registry exactly as its `Histogram` is, for a path every request takes:
 * prom-client's `observe` builds a key string from the labels and reaches each bucket by its bound turned into a
 * string, about 0.5 µs in a loop and 2 µs on a busy server (docs/performance.md, "Against the last release"). Here
 * a label set is bound once (`series`), and an observation is a walk over the bounds and three additions.
 */
export class BoundHistogram {
  readonly name: string
  readonly help: string
  readonly type = 'histogram'
  readonly aggregator = 'sum'
  private readonly bounds: readonly number[]
  /** By their labels' key: one series a label set, however many times it is bound (two routes of one pattern). */
  private readonly all = new Map<string, Series>()

  constructor (options: BoundHistogramOptions) {
    this.name = options.name
    this.help = options.help
    this.bounds = [...options.buckets]
    // The registry asks a metric only for these members: name, help, type, aggregator, get() and reset().
    for (const registry of options.registers) registry.registerMetric(this as unknown as Metric)
  }

  /** An observer of one label set, shown from now on: bind it at its first observation, as prom-client shows a set. */
  series (labels: Labels): (value: number) => void {
    const key = JSON.stringify(Object.entries(labels).sort(([a], [b]) => a < b ? -1 : 1))
    const series = this.all.get(key) ?? new Series({ ...labels }, this.bounds.length)
    this.all.set(key, series)
    const bounds = this.bounds
    return (value) => {
      let bucket = 0
      while (bucket < bounds.length && value > bounds[bucket]!) bucket++
      series.inBucket[bucket]!++
      series.sum += value
      series.count++
    }
  }

  /** prom-client's shape of a histogram's values: cumulative buckets with `le`, `+Inf`, then sum and count. */
  async get (): Promise<{
    name: string
    help: string
    type: 'histogram'
    aggregator: 'sum'
    values: Array<{ metricName: string, labels: Record<string, string | number>, value: number }>
  }> {
    const values = []
    for (const { labels, inBucket, sum, count } of this.all.values()) {
      let below = 0
      for (const [bucket, bound] of this.bounds.entries()) {
        below += inBucket[bucket]!
        values.push({ metricName: `${this.name}_bucket`, labels: { le: bound, ...labels }, value: below })
      }
      values.push({ metricName: `${this.name}_bucket`, labels: { le: '+Inf', ...labels }, value: count })
      values.push({ metricName: `${this.name}_sum`, labels: { ...labels }, value: sum })
      values.push({ metricName: `${this.name}_count`, labels: { ...labels }, value: count })
    }
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values }
  }

  /** Zeroes every series (prom-client's drops them; nothing here resets the registry). */
  reset (): void {
    for (const series of this.all.values()) {
      series.inBucket.fill(0)
      series.sum = 0
      series.count = 0
    }
  }
}
