import t from 'tap'
import { chromium, type Page } from 'playwright-core'
import { addUser, build, login } from '../support/helper.js'
import { CHROMIUM, chromiumSkip } from '../support/requirements.js'

const skip = chromiumSkip()

/** The status "Try it out" → "Execute" shows for one operation (its id in Swagger UI is tag-operationId). */
async function tryItOut (page: Page, operation: string, parameters: Record<string, string> = {}): Promise<string> {
  const block = page.locator(`#operations-${operation}`)
  await block.locator('.opblock-summary').first().click()
  await block.locator('button.try-out__btn').click()
  for (const [name, value] of Object.entries(parameters)) {
    await block.locator(`tr[data-param-name="${name}"] input`).fill(value)
  }
  await block.locator('button.execute').click()
  const status = block.locator('.live-responses-table tbody .response-col_status').first()
  await status.waitFor({ timeout: 10_000 })
  return (await status.innerText()).trim()
}

t.test('/docs works over plain HTTP under a balancer-like host name', { skip }, async (t) => {
  const app = await build(t)
  await addUser(app, { username: 'docs-reader', password: 'docs-reader-password' })
  const { access_token: accessToken } = await login(app, 'docs-reader', 'docs-reader-password')
  await app.listen({ host: '127.0.0.1', port: 0 })
  const { port } = app.server.address() as { port: number }

  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update',
      '--disable-sync', '--no-first-run', '--disable-quic',
      // A name that is not localhost: browsers treat localhost as secure whatever its scheme.
      '--host-resolver-rules=MAP meridian.test 127.0.0.1'
    ]
  })
  t.teardown(async () => { await browser.close() })
  const page = await browser.newPage()
  const problems: string[] = []
  page.on('requestfailed', (request) => { problems.push(`failed: ${request.url()} ${request.failure()?.errorText ?? ''}`) })
  page.on('response', (response) => { if (response.status() >= 400) problems.push(`${response.status()}: ${response.url()}`) })
  page.on('console', (message) => { if (message.type() === 'error') problems.push(`console: ${message.text()}`) })

  const origin = `http://meridian.test:${port}`
  await page.goto(`${origin}/docs`)
  await page.locator('.opblock').first().waitFor({ timeout: 15_000 })

  const shown = await page.locator('.opblock').evaluateAll((blocks) => blocks.map((block) => block.id).sort())
  t.same(shown, [
    'operations-auth-login', 'operations-auth-logout', 'operations-auth-refreshToken', 'operations-markdown-renderMarkdown',
    'operations-operations-getLiveness', 'operations-operations-getReadiness', 'operations-sun-getSunInfo',
    'operations-users-listUsers'
  ], 'every operation is shown')

  t.equal(await tryItOut(page, 'sun-getSunInfo', { timestamp: '1700000000', latitude: '51.4779', longitude: '-0.0015' }), '200',
    'Try it out on getSunInfo answers 200')

  await page.locator('.auth-wrapper button.authorize').click()
  const dialog = page.locator('.modal-ux')
  await dialog.locator('input').first().fill(accessToken)
  await dialog.locator('button.authorize').click()
  await dialog.locator('button.btn-done').click()
  t.equal(await tryItOut(page, 'users-listUsers'), '200', 'after Authorize, Try it out on listUsers answers 200')

  t.same(problems, [], 'no request failed, none answered 4xx/5xx, no console error (CSP included)')
  t.ok(page.url().startsWith(`${origin}/docs`), 'the page stayed on plain HTTP')
})
