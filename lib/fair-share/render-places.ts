/** What closes when the client hangs up: the reply's socket side (`reply.raw`). */
export interface Hangup { once: (event: 'close', listener: () => void) => unknown }

export interface RenderPlace { readonly client: string, held: boolean, handling: boolean }

/** Documents each client has rendering or about to; a hang-up frees a place only before the handler starts. */
export class RenderPlaces {
  readonly #taken = new Map<string, number>()

  taken (client: string): number {
    return this.#taken.get(client) ?? 0
  }

  /** `handling`: the handler has started (the body was read before the place was needed). */
  take (client: string, hangup: Hangup, handling: boolean): RenderPlace {
    this.#add(client)
    const place: RenderPlace = { client, held: true, handling }
    hangup.once('close', () => { if (!place.handling) this.release(place) })
    return place
  }

  /** The body is read and the handler is next: the place is now released only once the answer is sent. */
  holdWhileHandling (place: RenderPlace): void {
    place.handling = true
    if (!place.held) { // the client hung up just as its body was read: the render still runs
      place.held = true
      this.#add(place.client)
    }
  }

  release (place: RenderPlace): void {
    if (!place.held) return
    place.held = false
    const left = this.taken(place.client) - 1
    if (left > 0) this.#taken.set(place.client, left)
    else this.#taken.delete(place.client)
  }

  #add (client: string): void {
    this.#taken.set(client, this.taken(client) + 1)
  }
}
