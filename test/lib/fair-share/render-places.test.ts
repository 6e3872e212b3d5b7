import { EventEmitter } from 'node:events'
import t from 'tap'
import { RenderPlaces } from '../../../lib/fair-share/render-places.js'

t.test('a place is held until released, once, whatever is called twice', async (t) => {
  const places = new RenderPlaces()
  const first = places.take('a', new EventEmitter(), false)
  places.take('a', new EventEmitter(), true)
  places.take('b', new EventEmitter(), false)
  t.equal(places.taken('a'), 2)
  t.equal(places.taken('b'), 1)
  places.release(first)
  places.release(first)
  t.equal(places.taken('a'), 1, 'a second release of the same place frees nothing more')
  t.equal(places.taken('c'), 0, 'a client never seen holds none')
})

t.test('a hang-up frees the place before the handler starts, not after', async (t) => {
  const places = new RenderPlaces()
  const waiting = new EventEmitter()
  places.take('a', waiting, false)
  waiting.emit('close')
  t.equal(places.taken('a'), 0, 'the client left while its body was read: no render will run')

  const handled = new EventEmitter()
  places.take('a', handled, true)
  handled.emit('close')
  t.equal(places.taken('a'), 1, 'the client left while its document renders: the render still runs, the place stays')

  const readThenHandled = new EventEmitter()
  const place = places.take('b', readThenHandled, false)
  places.holdWhileHandling(place)
  readThenHandled.emit('close')
  t.equal(places.taken('b'), 1, 'held while handling: a hang-up no longer frees it')
  places.release(place)
  t.equal(places.taken('b'), 0, 'the answer sent frees it')
})

t.test('a client that hung up just as its body was read holds the place again once its handler starts', async (t) => {
  const places = new RenderPlaces()
  const connection = new EventEmitter()
  const place = places.take('a', connection, false)
  connection.emit('close')
  t.equal(places.taken('a'), 0)
  places.holdWhileHandling(place)
  t.equal(places.taken('a'), 1, 'the render runs: it counts')
  places.holdWhileHandling(place)
  t.equal(places.taken('a'), 1, 'once')
})
