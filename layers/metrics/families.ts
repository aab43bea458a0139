/**
 * Counters and histograms whose recording costs a map lookup and a few additions, read by
 * prom-client's registry at scrape time (they implement its metric interface: `get()` gives
 * the samples, which the registry formats and `AggregatorRegistry` sums across workers).
 *
 * Why not prom-client's own `Counter`/`Histogram`: each of their `inc`/`observe` validates the
 * label object and builds a hash string from it, about 1 µs with four labels; an inference
 * records seven or so, which would cost more than the 3% of a request this is allowed. Here a
 * series is found by its label values joined, and the label object is built once per series.
 */
import type { Registry } from "prom-client"

type Labels = Record<string, string | number>

/**
 * How prom-client's `AggregatorRegistry` merges one metric of every worker (`workers = n`):
 * counts add up (`sum`); a ratio each worker last saw does not, its `max` is the truest.
 */
export type Aggregator = "sum" | "max"

/** one line of a scrape, as prom-client's registry reads it */
interface Sample {
  readonly metricName?: string
  readonly labels: Labels
  readonly value: number
}

interface MetricData {
  readonly name: string
  readonly help: string
  readonly type: "counter" | "gauge" | "histogram"
  readonly aggregator: Aggregator
  readonly values: ReadonlyArray<Sample>
}

const separator = "\u0001"

const labelsOf = (names: ReadonlyArray<string>, values: ReadonlyArray<string>): Labels => {
  const labels: Labels = {}
  for (let i = 0; i < names.length; i++) labels[names[i]] = values[i]
  return labels
}

abstract class Family {
  readonly aggregator: Aggregator
  readonly name: string
  readonly help: string
  readonly labelNames: ReadonlyArray<string>
  constructor(name: string, help: string, labelNames: ReadonlyArray<string>, aggregator: Aggregator = "sum") {
    this.name = name
    this.help = help
    this.labelNames = labelNames
    this.aggregator = aggregator
  }
  abstract readonly type: MetricData["type"]
  protected abstract samples(): Array<Sample>
  /** what prom-client's registry calls at scrape time */
  get(): Promise<MetricData> {
    return Promise.resolve({ name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values: this.samples() })
  }
}

export class CounterFamily extends Family {
  readonly type = "counter"
  private readonly series = new Map<string, { readonly labels: Labels; value: number }>()

  inc(values: ReadonlyArray<string>, by = 1): void {
    const key = values.join(separator)
    const found = this.series.get(key)
    if (found !== undefined) found.value += by
    else this.series.set(key, { labels: labelsOf(this.labelNames, values), value: by })
  }

  protected samples() {
    return [...this.series.values()].map(({ labels, value }) => ({ labels, value }))
  }

  /** each series' labels and value */
  values(): ReadonlyArray<{ readonly labels: Labels; readonly value: number }> {
    return this.samples()
  }
}

interface HistogramSeries {
  readonly labels: Labels
  /** observations per bucket (not cumulative), the last one past every bound */
  readonly counts: Float64Array
  sum: number
  count: number
}

export class HistogramFamily extends Family {
  readonly type = "histogram"
  private readonly series = new Map<string, HistogramSeries>()

  readonly bounds: ReadonlyArray<number>
  constructor(name: string, help: string, labelNames: ReadonlyArray<string>, bounds: ReadonlyArray<number>) {
    super(name, help, labelNames)
    this.bounds = bounds
  }

  observe(values: ReadonlyArray<string>, value: number): void {
    const key = values.join(separator)
    let found = this.series.get(key)
    if (found === undefined) {
      found = { labels: labelsOf(this.labelNames, values), counts: new Float64Array(this.bounds.length + 1), sum: 0, count: 0 }
      this.series.set(key, found)
    }
    let bucket = 0
    while (bucket < this.bounds.length && value > this.bounds[bucket]) bucket++
    found.counts[bucket]++
    found.sum += value
    found.count++
  }

  /** each series' labels and number of observations */
  counts(): ReadonlyArray<{ readonly labels: Labels; readonly count: number }> {
    return [...this.series.values()].map(({ count, labels }) => ({ labels, count }))
  }

  protected samples() {
    const samples: Array<Sample> = []
    for (const { count, counts, labels, sum } of this.series.values()) {
      let cumulative = 0
      for (let i = 0; i < this.bounds.length; i++) {
        cumulative += counts[i]
        samples.push({ metricName: `${this.name}_bucket`, labels: { ...labels, le: this.bounds[i] }, value: cumulative })
      }
      samples.push({ metricName: `${this.name}_bucket`, labels: { ...labels, le: "+Inf" }, value: count })
      samples.push({ metricName: `${this.name}_sum`, labels, value: sum })
      samples.push({ metricName: `${this.name}_count`, labels, value: count })
    }
    return samples
  }
}

/** A metric read at scrape time from figures kept elsewhere (the write queue's counters). */
export class CollectedFamily extends Family {
  readonly type: "counter" | "gauge"
  private readonly collect: () => ReadonlyArray<Sample>
  constructor(name: string, help: string, type: "counter" | "gauge", collect: () => ReadonlyArray<Sample>, aggregator: Aggregator = "sum") {
    super(name, help, [], aggregator)
    this.type = type
    this.collect = collect
  }

  protected samples() {
    return [...this.collect()]
  }
}

/**
 * The last value of each label, for a gauge collected at scrape time, holding at most `capacity`
 * labels: the one least recently set goes first (a Map keeps insertion order, and a label set
 * again is moved to its end).
 */
export class BoundedGauge {
  private readonly values = new Map<string, number>()
  private readonly capacity: number
  constructor(capacity: number) {
    this.capacity = capacity
  }

  set(label: string, value: number): void {
    this.values.delete(label)
    this.values.set(label, value)
    if (this.values.size > this.capacity) this.values.delete(this.values.keys().next().value!)
  }

  samples(labelName: string): Array<Sample> {
    return [...this.values].map(([label, value]) => ({ labels: { [labelName]: label }, value }))
  }
}

/** registers `families` in `registry` (prom-client takes any object with a name and `get`) */
export const register = (registry: Registry, families: ReadonlyArray<Family>): void => {
  for (const family of families) registry.registerMetric(family as unknown as Parameters<Registry["registerMetric"]>[0])
}
