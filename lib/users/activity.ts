/** Activity written at most once per interval per key, in one statement per interval; other replicas see it in two. */
export class ActivityRecorder<K = number> {
  private pending = new Map<K, number>()
  /** Activity written within the last interval: no need to write it again before it ends. */
  private written = new Map<K, number>()
  private flushing: Promise<void> | undefined
  private readonly timer: NodeJS.Timeout

  constructor (
    private readonly write: (seen: ReadonlyMap<K, number>) => Promise<void>,
    private readonly intervalMs: number,
    private readonly onWriteError: (error: unknown) => void
  ) {
    this.timer = setInterval(() => { void this.flush() }, intervalMs).unref()
  }

  seen (key: K, at = Date.now()): void {
    const last = this.pending.get(key) ?? this.written.get(key)
    if (last !== undefined && at - last < this.intervalMs) return
    this.pending.set(key, at)
  }

  /** The latest activity of `key` this replica knows of that the database may not have yet. */
  lastSeen (key: K): number | undefined {
    return this.pending.get(key) ?? this.written.get(key)
  }

  /** Writes what is pending; on failure (the database away) keeps it for the next interval. */
  async flush (now = Date.now()): Promise<void> {
    if (this.flushing !== undefined) return await this.flushing
    this.flushing = this.writePending(now).finally(() => { this.flushing = undefined })
    return await this.flushing
  }

  private async writePending (now: number): Promise<void> {
    const batch = this.pending
    this.pending = new Map()
    const expired = now - this.intervalMs
    for (const [key, at] of this.written) if (at < expired) this.written.delete(key)
    if (batch.size === 0) return
    try {
      await this.write(batch)
      for (const [key, at] of batch) this.written.set(key, at)
    } catch (error) {
      for (const [key, at] of batch) if (!this.pending.has(key)) this.pending.set(key, at)
      this.onWriteError(error)
    }
  }

  /** Stops the timer and writes what is pending, after a write under way, once more if that one failed. */
  async close (): Promise<void> {
    clearInterval(this.timer)
    await this.flushing
    await this.flush()
  }
}
