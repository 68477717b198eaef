'use strict'
// The /ui dashboard (docs/dashboard.md) in a real headless browser: Debian's chromium
// (/usr/bin/chromium, or $CHROMIUM) driven by playwright-core (no browser download), against
// `steward serve --embedded-cluster realistic` ($STEWARD_BINARY). The page must follow projects
// through their phases live (the watch stream), narrow the table, show a project's objects,
// conditions and history, run actions behind a confirmation, show the API's errors, resume its
// watch after a cut, and talk to nothing but Steward, with the token only in the Authorization
// header. With UI_SCREENSHOTS=<dir> (docs/images) it saves the screenshots docs/dashboard.md
// shows.
//
// Run: STEWARD_BINARY=build/steward node --test tests/ui/

const test = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { chromium } = require('playwright-core')
const { Steward, request } = require('../../integrations/flowfuse-driver/test/helpers/steward.js')

const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium'
const WAIT = { timeout: 20000, polling: 50 } // every wait on the page: a condition with a deadline

// The phase the table shows for `name` ('' when there is no row).
function rowPhase (page, name) {
  return page.evaluate(n => {
    const row = document.querySelector(`#project-table tbody tr[data-project="${n}"]`)
    return row ? row.querySelector('.phase').textContent : ''
  }, name)
}

function waitRowPhase (page, name, phases) {
  return page.waitForFunction(([n, want]) => {
    const row = document.querySelector(`#project-table tbody tr[data-project="${n}"]`)
    return row && want.includes(row.querySelector('.phase').textContent)
  }, [name, phases], WAIT)
}

const visibleRows = page => page.$$eval('#project-table tbody tr', rows => rows.map(r => r.dataset.project))

test('the dashboard follows projects live and acts on them', { timeout: 120000 }, async t => {
  const steward = await Steward.start({ profile: 'realistic' })
  t.after(() => steward.stop())
  const origin = new URL(steward.url).origin
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] })
  t.after(() => browser.close())
  const context = await browser.newContext({ viewport: { width: 1180, height: 640 } })
  const page = await context.newPage()
  const requests = []
  page.on('request', r => requests.push({ url: r.url(), method: r.method(), headers: r.headers() }))
  const pageErrors = []
  page.on('pageerror', e => pageErrors.push(e.message))
  const shots = process.env.UI_SCREENSHOTS
  // The steps share one page: after a failed step the rest are skipped (not left waiting), and
  // nothing restarts Steward once the test is being torn down.
  let broken = false
  let closing = false
  t.after(() => { closing = true })
  const step = (name, fn) => t.test(name, async st => {
    if (broken || closing) return st.skip('an earlier step failed')
    try {
      await fn()
    } catch (err) {
      broken = true
      throw err
    }
  })
  if (shots) fs.mkdirSync(shots, { recursive: true })

  // The shell needs no token and holds no data; the API still refuses a call without one.
  const shell = await request(steward.url + '/ui')
  assert.equal(shell.status, 200)
  assert.match(shell.headers['content-security-policy'], /default-src 'self'/)
  assert.equal((await request(steward.url + '/v1/projects')).status, 401)

  await page.goto(steward.url + '/ui')
  await page.waitForSelector('#sign-in-form', { state: 'visible' })

  await step('a wrong token is refused and shown so', async () => {
    await page.fill('#token', 'not-the-token')
    await page.click('#sign-in-form button[type=submit]')
    await page.waitForSelector('#sign-in-error', { state: 'visible', ...WAIT })
    assert.match(await page.textContent('#sign-in-error'), /refused/)
    assert.equal(await page.isVisible('#projects'), false)
    assert.equal(await page.evaluate(() => sessionStorage.length), 0)
  })

  await page.fill('#token', steward.token)
  await page.click('#sign-in-form button[type=submit]')
  await page.waitForSelector('#live[data-state="live"]', WAIT)

  // Platform-issued credentials of ui-alpha: their values must never reach the page.
  const credentials = { clientId: 'ui-client-id-7f3a', clientSecret: 'ui-client-secret-9c1e', token: 'ffpt_ui-token-4b2d' }
  await step('a project started through the API moves through its phases on the page', async () => {
    // Every phase the row of ui-alpha shows, in order, as the page renders it.
    await page.evaluate(() => {
      window.__phases = []
      const record = () => {
        const row = document.querySelector('#project-table tbody tr[data-project="ui-alpha"]')
        const p = row && row.querySelector('.phase').textContent
        if (p && window.__phases[window.__phases.length - 1] !== p) window.__phases.push(p)
      }
      new MutationObserver(record).observe(document.querySelector('#project-table tbody'),
        { childList: true, subtree: true, characterData: true })
    })
    const put = await steward.api('PUT', '/v1/projects/ui-alpha', { spec: { team: 'team-a', credentials }, start: true })
    assert.equal(put.status, 201, JSON.stringify(put.body))
    await waitRowPhase(page, 'ui-alpha', ['Running'])
    const seen = await page.evaluate(() => window.__phases)
    assert.equal(seen[seen.length - 1], 'Running')
    assert.ok(seen.indexOf('Provisioning') >= 0 && seen.indexOf('Provisioning') < seen.indexOf('Running'),
      `the row went through Provisioning before Running: ${seen.join(' → ')}`)
    const row = '#project-table tbody tr[data-project="ui-alpha"]'
    assert.equal(await page.textContent(`${row} .team`), 'team-a')
    const link = await page.getAttribute(`${row} a[target=_blank]`, 'href')
    assert.match(link, /^http:\/\/ui-alpha\./)
    assert.match(await page.textContent(`${row} .age`), /^\d+[smhd]$/)
  })

  await step('filters and search narrow the table', async () => {
    for (const [name, team, start] of [['ui-beta', 'team-b', false], ['ui-gamma', 'team-b', true]]) {
      const put = await steward.api('PUT', `/v1/projects/${name}`, { spec: { team }, start })
      assert.equal(put.status, 201, JSON.stringify(put.body))
    }
    await page.waitForFunction(() => document.querySelectorAll('#project-table tbody tr').length === 3, null, WAIT)
    await page.selectOption('#filter-team', 'team-b')
    assert.deepEqual(await visibleRows(page), ['ui-beta', 'ui-gamma'])
    await page.fill('#search', 'gam')
    assert.deepEqual(await visibleRows(page), ['ui-gamma'])
    await page.selectOption('#filter-team', '')
    await page.fill('#search', 'alp')
    assert.deepEqual(await visibleRows(page), ['ui-alpha'])
    await page.fill('#search', '')
    await page.selectOption('#filter-phase', 'Running')
    assert.deepEqual(await visibleRows(page), ['ui-alpha'].concat((await rowPhase(page, 'ui-gamma')) === 'Running' ? ['ui-gamma'] : []))
    await page.selectOption('#filter-phase', '')
    assert.equal((await visibleRows(page)).length, 3)
    await waitRowPhase(page, 'ui-gamma', ['Running'])
    if (shots) await page.screenshot({ path: path.join(shots, 'dashboard-table.png') })
  })

  await step('the detail view shows objects, conditions and history', async () => {
    await page.click('#project-table tbody tr[data-project="ui-alpha"] a:not([target])')
    await page.waitForSelector('#detail', { state: 'visible', ...WAIT })
    assert.equal(await page.textContent('#detail-name'), 'ui-alpha')
    await page.waitForFunction(() => document.querySelectorAll('#objects tbody tr').length > 0, null, WAIT)
    const objects = await page.$$eval('#objects tbody tr', rows => rows.map(r => [...r.cells].map(c => c.textContent)))
    const byResource = Object.fromEntries(objects.map(o => [o[0], o]))
    for (const r of ['Deployment', 'Service', 'Ingress']) {
      assert.ok(byResource[r], `an object row for ${r}: ${JSON.stringify(objects)}`)
      assert.equal(byResource[r][1], 'present, ready')
      assert.equal(byResource[r][2], 'ready')
    }
    const api = (await steward.api('GET', '/v1/projects/ui-alpha')).body
    assert.deepEqual(objects.map(o => o[0]).sort(), api.status.conditions.map(c => c.resource).sort())
    // History: the API's timeline, every entry (the create and the phases it went through).
    const history = (await steward.api('GET', '/v1/projects/ui-alpha/history')).body.items
    await page.waitForFunction(n => document.querySelectorAll('#history li').length >= n, history.length, WAIT)
    const shown = await page.$$eval('#history li', lis => lis.map(li => li.textContent))
    for (const h of history) assert.ok(shown.some(s => s.includes(h.summary)), `history shows "${h.summary}"`)
    assert.ok(await page.$('#history li[data-kind="phase"]'), 'a phase entry in the history')
    // Secrets never rendered: none of the platform-issued values is on the page (the API itself
    // shows only their fingerprint, which is no secret).
    assert.ok(api.spec.credentials?.fingerprint, 'the project has supplied credentials')
    const body = await page.content()
    for (const value of Object.values(credentials)) assert.ok(!body.includes(value), 'a credential value on the page')
    await page.click('#load-logs')
    // The embedded cluster's pods run the launcher stand-in, which answers with its log lines.
    await page.waitForSelector('#logs', { state: 'visible', ...WAIT })
    // Each line: the launcher time as ISO 8601, the pod, the level.
    assert.match(await page.textContent('#logs'), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z ui-alpha-\S+ \w+ /m)
    if (shots) await page.screenshot({ path: path.join(shots, 'dashboard-detail.png'), fullPage: true })
  })

  await step('actions ask first, then act; the API\'s error is shown', async () => {
    // Cancel sends nothing.
    const posts = () => requests.filter(r => r.method === 'POST').length
    const before = posts()
    await page.click('[data-action="suspend"]')
    await page.waitForSelector('#confirm[open]', WAIT)
    assert.match(await page.textContent('#confirm-text'), /Suspend project ui-alpha/)
    await page.click('#confirm-cancel')
    await page.waitForSelector('#confirm:not([open])', { state: 'attached', ...WAIT })
    assert.equal(posts(), before)
    assert.equal((await steward.project('ui-alpha')).desiredState, 'running')
    // Confirmed: suspended, and the page follows it there.
    await page.click('[data-action="suspend"]')
    await page.waitForSelector('#confirm[open]', WAIT)
    await page.click('#confirm-ok')
    await page.waitForSelector('#action-done', { state: 'visible', ...WAIT })
    await page.waitForSelector('#detail[data-phase="Suspended"]', WAIT)
    assert.equal((await steward.project('ui-alpha')).desiredState, 'suspended')
    const objects = await page.$$eval('#objects tbody tr', rows => rows.map(r => r.cells[1].textContent))
    assert.ok(objects.length > 0 && objects.every(d => d === 'absent'), JSON.stringify(objects))
    // Restart of a suspended project: the API answers 409, the page says why.
    await page.click('[data-action="restart"]')
    await page.waitForSelector('#confirm[open]', WAIT)
    await page.click('#confirm-ok')
    await page.waitForSelector('#action-error', { state: 'visible', ...WAIT })
    assert.match(await page.textContent('#action-error'), /^Conflict: project ui-alpha is not running/)
    await page.click('#back')
    await waitRowPhase(page, 'ui-alpha', ['Suspended'])
  })

  await step('the watch resumes from its last event id after a cut', async () => {
    const watches = () => requests.filter(r => new URL(r.url).pathname === '/v1/watch')
    const opened = watches().length
    // A new Steward process on the same store and port: every stream is cut.
    const port = new URL(steward.url).port
    steward.args[steward.args.indexOf('--listen') + 1] = `127.0.0.1:${port}`
    if (closing) return
    await steward.restart()
    assert.equal(new URL(steward.url).port, port)
    const put = await steward.api('POST', '/v1/projects/ui-beta/start')
    assert.equal(put.status, 202, JSON.stringify(put.body))
    await waitRowPhase(page, 'ui-beta', ['Provisioning', 'Running'])
    const resumed = watches().slice(opened)
    assert.ok(resumed.length >= 1, 'the page opened the watch again')
    assert.match(resumed[0].headers['last-event-id'] || '', /^[0-9a-z]+\.\d+$/)
    await page.waitForSelector('#live[data-state="live"]', WAIT)
  })

  await step('the page talks to Steward only, with the token in the header only', async () => {
    assert.ok(requests.length > 5)
    for (const r of requests) {
      assert.equal(new URL(r.url).origin, origin, `request to ${r.url}`)
      assert.ok(!r.url.includes(steward.token), `the token in a URL: ${r.url}`)
      if (new URL(r.url).pathname.startsWith('/v1/')) {
        assert.ok(r.headers.authorization === `Bearer ${steward.token}` ||
          r.headers.authorization === 'Bearer not-the-token', `${r.url}: ${r.headers.authorization}`)
      }
    }
    assert.equal(await page.evaluate(() => localStorage.length), 0)
    assert.equal(await page.evaluate(() => document.cookie), '')
    assert.equal(await page.evaluate(() => sessionStorage.getItem('steward.token')), steward.token)
    assert.deepEqual(pageErrors, [])
  })
})
