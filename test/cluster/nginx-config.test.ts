/**
 * The cluster harness changes only the addresses (and this machine's files) of the nginx
 * configuration it runs: otherwise the cluster test would not be testing deploy/nginx.conf.
 */
import { spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { skipIfMissing } from '../support/requirements.js'
import { deployNginxConfigPath, STOCK_NGINX_CONFIG, templateNginxConfig } from './harness.js'

const NGINX = process.env.NGINX ?? '/usr/sbin/nginx'
const deployConfig = readFileSync(deployNginxConfigPath, 'utf8')
const balancer = { host: '127.0.1.2', port: 8080 }
const replicas = [{ host: '127.0.1.3', port: 3001 }, { host: '127.0.1.4', port: 3002 }, { host: '127.0.1.5', port: 3003 }]

/** Directives, one per entry, with comments and layout gone, for comparison. */
const directives = (config: string) => config.replace(/#[^\n]*/g, '').split(/[;{}]/).map((part) => part.trim().replace(/\s+/g, ' ')).filter(Boolean)

t.test('deploy/nginx.conf keeps every directive but the addresses', async (t) => {
  const templated = templateNginxConfig(deployConfig, balancer, replicas, '/run/cluster')
  const servers = directives(templated).filter((directive) => directive.startsWith('server '))
  const replicaLines = (parameters: string) => replicas.map(({ host, port }) => `server ${host}:${port} ${parameters}`)
  t.same(servers, [...replicaLines('max_fails=1 fail_timeout=2s'), ...replicaLines('max_fails=0')], 'one server per replica in each upstream (all routes, the database\'s), with the shipped parameters')
  t.same(directives(templated).filter((directive) => directive.startsWith('listen ')), ['listen 127.0.1.2:8080'])

  const changed = /^(server|listen) |_temp_path |^access_log |^error_log |^proxy_bind /
  const kept = directives(templated).filter((directive) => !changed.test(directive))
  t.same(kept, directives(deployConfig).filter((directive) => !changed.test(directive)), 'everything else is the shipped file, in order')
  t.match(templated, 'proxy_bind 127.0.1.2;', 'nginx connects to the replicas from its own address')
  t.match(templated, 'proxy_temp_path /run/cluster/proxy_temp;', 'and keeps its files in the run directory')
  t.match(templated, 'access_log /run/cluster/access-shipped.log meridian;', 'its own access log too, in its own format')
  t.match(templated, 'error_log /run/cluster/error.log crit;', 'and its error log at the shipped level')
  t.notMatch(templated, 'access.log ', 'and no access log of the harness\'s beside it')
  const stock = templateNginxConfig(STOCK_NGINX_CONFIG, balancer, replicas, '/run/cluster')
  t.match(stock, /^error_log \/run\/cluster\/error.log error;/, 'a file without an error log gets nginx\'s default level')
  t.match(stock, 'access_log /run/cluster/access.log harness;', 'one without an access log gets the harness\'s')
  t.notMatch(/log_format harness [^;]*/.exec(stock)?.[0], /\$(request|request_uri|args|query_string)\b/, 'whose format has no query')
  t.match(deployConfig, /log_format meridian [^;]*request_id=\$meridian_request_id/, 'whose lines carry the request id the replicas log')
})

t.test('each replica keeps the parameters of the server line at its position, or of the last', async (t) => {
  const variant = 'events {}\nhttp { upstream meridian { server a:1 max_fails=0; server b:2 backup; keepalive 4; } server { listen 80 default_server; } }'
  const templated = templateNginxConfig(variant, balancer, replicas, '/run/cluster')
  t.same(directives(templated).filter((directive) => /^(server|listen|keepalive) /.test(directive)), [
    'server 127.0.1.3:3001 max_fails=0',
    'server 127.0.1.4:3002 backup',
    'server 127.0.1.5:3003 backup',
    'keepalive 4',
    'listen 127.0.1.2:8080 default_server'
  ])
})

t.test('a configuration the harness cannot place is refused with a reason', async (t) => {
  t.throws(() => templateNginxConfig('events {}\nhttp { server { listen 80; } }', balancer, replicas, '/d'), /upstream meridian/)
  t.throws(() => templateNginxConfig('events {}\nhttp { upstream meridian { server a:1; } server { listen 80; listen 81; } }', balancer, replicas, '/d'), /exactly one `listen`, not 2/)
})

t.test('nginx accepts the templated files', { skip: skipIfMissing(!existsSync(NGINX) && `no nginx at ${NGINX}`) }, async (t) => {
  const directory = mkdtempSync(join(tmpdir(), 'meridian-nginx-'))
  t.teardown(() => { rmSync(directory, { recursive: true, force: true }) })
  for (const [name, config] of [['deploy/nginx.conf', deployConfig], ['STOCK_NGINX_CONFIG', STOCK_NGINX_CONFIG]] as const) {
    const file = join(directory, 'nginx.conf')
    writeFileSync(file, templateNginxConfig(config, balancer, replicas, directory))
    const check = spawnSync(NGINX, ['-t', '-q', '-p', directory, '-c', file, '-g', `pid ${join(directory, 'nginx.pid')}; error_log stderr;`], { encoding: 'utf8' })
    t.equal(check.status, 0, `${name}: ${check.stderr}`)
  }
})
