#!/usr/bin/env node
// A stand-in for `docker` that does what `docker compose exec -T postgres CMD ARGS…` does with deploy/compose.yaml
// (no Docker engine here): it runs CMD on this machine against the test's PostgreSQL server, as the compose file's
// user on the compose file's database, which it maps to STAND_IN_PGUSER and STAND_IN_DATABASE. Anything else fails.
import { spawnSync } from 'node:child_process'

const [compose, exec, tty, service, command, ...args] = process.argv.slice(2)
if (compose !== 'compose' || exec !== 'exec' || tty !== '-T' || service !== 'postgres' || command === undefined) {
  console.error(`docker stand-in: only \`docker compose exec -T postgres …\`, not: ${process.argv.slice(2).join(' ')}`)
  process.exit(2)
}
const { STAND_IN_COMPOSE_NAME: name, STAND_IN_PGUSER: user, STAND_IN_DATABASE: database } = process.env
if (!name || !user || !database) {
  console.error('docker stand-in: STAND_IN_COMPOSE_NAME, STAND_IN_PGUSER and STAND_IN_DATABASE must be set')
  process.exit(2)
}
// The compose file's name for both (POSTGRES_USER, POSTGRES_DB) is where the container's user and database appear,
// as separate arguments; written any other way it would reach a real database of that name: refused.
const mapped = args.map((arg, index) => {
  if (arg !== name) return arg
  return args[index - 1] === '-U' ? user : database
})
const unmapped = args.find((arg) => arg !== name && arg.includes(name))
if (unmapped !== undefined) {
  console.error(`docker stand-in: cannot map ${unmapped}: write -U ${name} and -d ${name} (or ${name} alone)`)
  process.exit(2)
}
const run = spawnSync(command, mapped, { stdio: 'inherit' })
process.exit(run.status ?? 1)
