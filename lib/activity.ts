/**
 * Users' activity (a login, a refresh, an authenticated request), written to the database at
 * most once per interval per user and in one statement per interval for all of them, instead
 * of a write on every request. What is not written yet is still known here, so this replica's
 * own answers are exact; other replicas see it within two intervals.
 */
export class ActivityRecorder {
  /** Activity not written yet: user id → UNIX ms. */
  private pending = new Map<number, number>()
  /** Activity written within the last interval: no need to write it again before it ends. */
  private written = new Map<number, number>()
  private flushing: Promise<void> | undefined
  private readonly timer: NodeJS.Timeout

  constructor (
    private readonly write: (seen: ReadonlyMap<number, number>) => Promise<void>,
    private readonly intervalMs: number,
    private readonly onWriteError: (error: unknown) => void
  ) {
    this.timer = setInterval(() => { void this.flush() }, intervalMs).unref()
  }

  seen (userId: number, at = Date.now()): void {
    const last = this.pending.get(userId) ?? this.written.get(userId)
    if (last !== undefined && at - last < this.intervalMs) return
    this.pending.set(userId, at)
  }

  /** The latest activity of `userId` this replica knows of that the database may not have yet. */
  lastSeen (userId: number): number | undefined {
    return this.pending.get(userId) ?? this.written.get(userId)
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
    for (const [userId, at] of this.written) if (at < expired) this.written.delete(userId)
    if (batch.size === 0) return
    try {
      await this.write(batch)
      for (const [userId, at] of batch) this.written.set(userId, at)
    } catch (error) {
      for (const [userId, at] of batch) if (!this.pending.has(userId)) this.pending.set(userId, at)
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
