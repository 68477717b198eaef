'use strict'
// The /ui dashboard (docs/dashboard.md) in a real headless browser: Debian's chromium
// (/usr/bin/chromium, or $CHROMIUM) driven by playwright-core (no browser download), against
// `steward serve --embedded-cluster` with the realistic profile ($STEWARD_BINARY; Deployments
// that cannot progress fail after 6 s instead of 600). The page must follow projects through
// their phases live (the watch stream), narrow the table, show a project's objects, conditions
// and history, chart each pod's resources live (uPlot, compiled into the binary), draw the phase
// timeline, count the fleet's phases, starts and failures, run actions behind a confirmation,
// show the API's errors, resume its watch after a cut, and talk to nothing but Steward, with the
// token only in the Authorization header and no Content-Security-Policy violation. With
// UI_SCREENSHOTS=<dir> (docs/images) it saves the screenshots docs/dashboard.md shows.
//
// Run: STEWARD_BINARY=build/steward node --test tests/ui/

const test = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { chromium } = require('playwright-core')
const { Steward, request, waitFor } = require('../../integrations/flowfuse-driver/test/helpers/steward.js')

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

// What a resources chart (#chart-cpu, #chart-mem, #chart-lag) holds: its uPlot instance's series
// labels (the pods) and how many points each has, and the pods its legend names.
function chartState (page, sel) {
  return page.evaluate(s => {
    const c = document.querySelector(s)
    const u = c && c.uplot
    if (!u) return null
    return {
      series: u.series.slice(1).map((x, i) => ({ label: x.label, points: u.data[i + 1].filter(v => v != null).length })),
      legend: [...c.querySelectorAll('.u-legend .u-series')].slice(1).map(e => e.querySelector('.u-label').textContent)
    }
  }, sel)
}

// Waits until each resources chart has a series per pod in `pods` with at least `points` points.
function waitCharts (page, pods, points) {
  return page.waitForFunction(([want, n]) => ['#chart-cpu', '#chart-mem', '#chart-lag'].every(s => {
    const u = document.querySelector(s).uplot
    if (!u || u.series.length !== want.length + 1) return false
    return want.every(pod => {
      const i = u.series.findIndex(x => x.label === pod)
      return i > 0 && u.data[i].filter(v => v != null).length >= n
    })
  }), [pods, points], WAIT)
}

// The phase timeline's rows: {kind, phase or operation, ms, text}.
const timelineRows = page => page.$$eval('#phase-timeline li', lis => lis.map(li => ({
  kind: li.dataset.kind,
  phase: li.dataset.phase || '',
  operation: li.dataset.operation || '',
  ms: Number(li.dataset.ms),
  duration: (li.querySelector('.tl-dur') || {}).textContent || '',
  text: li.textContent
})))

const DURATION = /^\d+(\.\d)? (ms|s)( so far)?$|^\d+ (min|h|d) \d+ (s|min|h)( so far)?$/

// A history's phase entries in order, and the first index of `phase` at or after `from`.
const indexOfPhase = (rows, phase, from = 0) => rows.findIndex((r, i) => i >= from && r.kind === 'phase' && r.phase === phase)

test('the dashboard follows projects live and acts on them', { timeout: 240000 }, async t => {
  // Deployments that cannot progress (an image the profile marks failing, `*:fail`) are Failed
  // after 600 s × 0.01 = 6 s.
  const steward = await Steward.start({ profileText: 'base: realistic\nprogress_deadline_scale: 0.01\n' })
  t.after(() => steward.stop())
  const origin = new URL(steward.url).origin
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] })
  t.after(() => browser.close())
  const context = await browser.newContext({ viewport: { width: 1180, height: 640 } })
  const page = await context.newPage()
  const requests = []
  page.on('request', r => requests.push({ url: r.url(), method: r.method(), headers: r.headers() }))
  // The resources streams the page opened, and whether each is over (finished, or aborted).
  const streams = []
  page.on('request', r => { if (/\/resources\/stream$/.test(new URL(r.url()).pathname)) streams.push({ request: r, url: r.url(), done: false }) })
  const streamDone = r => { for (const s of streams) if (s.request === r) s.done = true }
  page.on('requestfinished', streamDone)
  page.on('requestfailed', streamDone)
  const pageErrors = []
  page.on('pageerror', e => pageErrors.push(e.message))
  // Content-Security-Policy violations: as the page's event, and as the console reports them.
  const cspConsole = []
  page.on('console', m => { if (/Content.Security.Policy|Refused to/i.test(m.text())) cspConsole.push(m.text()) })
  await page.addInitScript(() => {
    window.__cspViolations = []
    document.addEventListener('securitypolicyviolation', e => window.__cspViolations.push(`${e.violatedDirective} ${e.blockedURI}`))
  })
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
  })

  await step('the phase timeline shows how long each step of the start took', async () => {
    // Provisioning, then Running (ongoing), each with its duration as text, after the operation.
    await page.waitForFunction(() => [...document.querySelectorAll('#phase-timeline li[data-kind="phase"]')]
      .some(li => li.dataset.phase === 'Running'), null, WAIT)
    const rows = await timelineRows(page)
    const op = rows.findIndex(r => r.kind === 'operation' && r.operation === 'create+start')
    const prov = indexOfPhase(rows, 'Provisioning', op)
    const run = indexOfPhase(rows, 'Running', prov)
    assert.ok(op >= 0 && prov > op && run > prov, `create+start, Provisioning, Running: ${JSON.stringify(rows)}`)
    for (const r of rows.filter(r => r.kind === 'phase')) assert.match(r.duration, DURATION, JSON.stringify(r))
    assert.match(rows[run].duration, /so far$/)
    assert.match(rows[prov].duration, /^\d+(\.\d)? (ms|s)$/)
    // Provisioning lasted from its entry to the next phase entry, as the API's history says.
    const history = (await steward.api('GET', '/v1/projects/ui-alpha/history')).body.items.filter(i => i.kind === 'phase')
    const k = history.findIndex(i => i.summary === 'Provisioning')
    const want = Date.parse(history[k + 1].at) - Date.parse(history[k].at)
    const provisioningMs = rows.filter(r => r.kind === 'phase').slice(0, -1).filter(r => r.phase === 'Provisioning').reduce((a, r) => a + r.ms, 0)
    const apiMs = history.slice(0, -1).map((h, i) => h.summary === 'Provisioning' ? Date.parse(history[i + 1].at) - Date.parse(h.at) : 0).reduce((a, b) => a + b, 0)
    assert.ok(want > 0 && provisioningMs === apiMs, `Provisioning took ${apiMs} ms by the API, ${provisioningMs} ms on the page`)
    // The bars are coloured by phase, and the colour is not all there is: the phase is text.
    const bar = await page.$eval('#phase-timeline li[data-phase="Running"] .tl-bar', b => getComputedStyle(b).backgroundColor)
    assert.equal(bar, 'rgb(26, 127, 55)')
  })

  await step('the resources charts of a running project get its pod\'s samples, live', async () => {
    const pods = (await steward.api('GET', '/v1/projects/ui-alpha/resources')).body.pods
    assert.equal(pods.length, 1, JSON.stringify(pods))
    await waitCharts(page, pods, 3)
    const cpu = await chartState(page, '#chart-cpu')
    assert.deepEqual(cpu.legend, pods, 'the legend names the pod')
    // Live: the stream adds points (one a second per pod).
    const before = cpu.series[0].points
    await page.waitForFunction(([pod, n]) => {
      const u = document.querySelector('#chart-mem').uplot
      const i = u.series.findIndex(x => x.label === pod)
      return u.data[i].filter(v => v != null).length > n
    }, [pods[0], (await chartState(page, '#chart-mem')).series[0].points], WAIT)
    assert.ok(before >= 3)
    assert.ok(streams.some(s => s.url.endsWith('/resources/stream') && !s.done), 'a resources stream is open')
    assert.equal(await page.isVisible('#resources-note'), false)
    if (shots) await page.screenshot({ path: path.join(shots, 'dashboard-detail.png'), fullPage: true })
  })

  let haId = ''
  await step('a two-replica project shows one series per pod; leaving the view stops its stream', async () => {
    // A project whose image never starts: it fails (the fleet view counts it below).
    const broken = await steward.api('PUT', '/v1/projects/ui-broken', { spec: { team: 'team-b', stack: { image: 'flowfuse/node-red:fail' } }, start: true })
    assert.equal(broken.status, 201, JSON.stringify(broken.body))
    const put = await steward.api('PUT', '/v1/projects/ui-ha', { spec: { team: 'team-a', replicas: 2 }, start: true })
    assert.equal(put.status, 201, JSON.stringify(put.body))
    haId = put.body.id
    await page.evaluate(id => { location.hash = `#/projects/${encodeURIComponent(id)}` }, haId)
    await page.waitForSelector('#detail[data-phase="Running"]', WAIT)
    assert.equal(await page.textContent('#detail-name'), 'ui-ha')
    const pods = await waitFor('two ready pods of ui-ha', async () => {
      const r = await steward.api('GET', '/v1/projects/ui-ha/resources')
      return r.status === 200 && r.body.pods.length === 2 && r.body.pods
    }, { timeoutMs: 20000 })
    await waitCharts(page, [...pods].sort(), shots ? 12 : 3)
    for (const sel of ['#chart-cpu', '#chart-mem', '#chart-lag']) {
      const st = await chartState(page, sel)
      assert.deepEqual(st.series.map(x => x.label), [...pods].sort(), sel)
      assert.deepEqual(st.legend, [...pods].sort(), `${sel}: the legend names both pods`)
    }
    if (shots) {
      // The detail view from its name to the resources charts.
      const top = await page.$eval('#detail', e => e.getBoundingClientRect().top + window.scrollY)
      const bottom = await page.$eval('#resources-charts', e => e.getBoundingClientRect().bottom + window.scrollY)
      await page.screenshot({ path: path.join(shots, 'dashboard-resources.png'), fullPage: true, clip: { x: 0, y: Math.max(0, top - 8), width: 1180, height: bottom - top + 24 } })
    }
    // Back to ui-alpha: ui-ha's stream is closed.
    const haStreams = () => streams.filter(s => s.url.includes(`/v1/projects/${encodeURIComponent(haId)}/`))
    assert.ok(haStreams().length >= 1)
    await page.evaluate(() => { location.hash = '' })
    await page.click('#project-table tbody tr[data-project="ui-alpha"] a:not([target])')
    await page.waitForSelector('#detail[data-phase="Running"]', WAIT)
    await waitFor('the streams of ui-ha closed', () => haStreams().every(s => s.done), { timeoutMs: 10000, everyMs: 50 })
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
  })

  await step('after a suspend the timeline shows Suspending then Suspended, and no stream runs', async () => {
    await page.waitForFunction(() => [...document.querySelectorAll('#phase-timeline li[data-kind="phase"]')]
      .some(li => li.dataset.phase === 'Suspended'), null, WAIT)
    const rows = await timelineRows(page)
    const run = indexOfPhase(rows, 'Running')
    const op = rows.findIndex((r, i) => i > run && r.kind === 'operation' && r.operation === 'suspend')
    const suspending = indexOfPhase(rows, 'Suspending', op)
    const suspended = indexOfPhase(rows, 'Suspended', suspending)
    assert.ok(run >= 0 && op > run && suspending > op && suspended > suspending,
      `Running, suspend, Suspending, Suspended: ${rows.map(r => r.phase || r.operation).join(' → ')}`)
    assert.match(rows[suspending].duration, /^\d+(\.\d)? (ms|s)$/)
    assert.match(rows[suspended].duration, /so far$/)
    // Running is over now: its duration is fixed.
    assert.doesNotMatch(rows[run].duration, /so far/)
    // The project stopped running: the resources stream is closed, and the page says why.
    const alphaId = (await steward.project('ui-alpha')).id
    await waitFor('the resources streams of ui-alpha closed', () => streams.filter(s => s.url.includes(alphaId)).every(s => s.done), { timeoutMs: 10000, everyMs: 50 })
    await page.waitForSelector('#resources-note', { state: 'visible', ...WAIT })
    assert.match(await page.textContent('#resources-note'), /Suspended: no pod runs/)
    await page.click('#back')
    await waitRowPhase(page, 'ui-alpha', ['Suspended'])
  })

  await step('the fleet view counts phases, starts and failures per minute, and the slowest starts', async () => {
    await page.click('#nav-fleet')
    await page.waitForSelector('#fleet', { state: 'visible', ...WAIT })
    // ui-broken fails after its Deployment's progress deadline.
    await page.waitForFunction(() => Number(document.querySelector('#fleet-rates').dataset.failures) >= 1, null, { ...WAIT, timeout: 40000 })
    // The counts per phase are the API's.
    const apiCounts = async () => {
      const items = (await steward.api('GET', '/v1/projects?limit=100')).body.items
      const c = {}
      for (const p of items) c[p.status.phase] = (c[p.status.phase] || 0) + 1
      return c
    }
    const pageCounts = () => page.$$eval('#fleet-counts li', lis => Object.fromEntries(lis.filter(li => li.dataset.count !== '0').map(li => [li.dataset.phase, Number(li.dataset.count)])))
    await waitFor('the fleet counts to be the API\'s', async () => JSON.stringify(await pageCounts()) === JSON.stringify(Object.fromEntries(Object.entries(await apiCounts()).sort((a, b) => ['Pending', 'Provisioning', 'Running', 'Updating', 'Degraded', 'Suspending', 'Suspended', 'Deleting', 'Failed'].indexOf(a[0]) - ['Pending', 'Provisioning', 'Running', 'Updating', 'Degraded', 'Suspending', 'Suspended', 'Deleting', 'Failed'].indexOf(b[0])))), { timeoutMs: 10000 })
    const counts = await pageCounts()
    // ui-gamma and ui-ha run; ui-alpha (suspended) and ui-beta (created without start) are Suspended.
    assert.deepEqual(counts, { Running: 2, Suspended: 2, Failed: 1 }, JSON.stringify(counts))
    // Starts seen: ui-alpha, ui-gamma, ui-ha (each from Provisioning to Running); one failure.
    const rates = await page.$eval('#fleet-rates', e => ({ ...e.dataset, text: e.textContent }))
    assert.equal(rates.starts, '3', JSON.stringify(rates))
    assert.equal(rates.failures, '1', JSON.stringify(rates))
    assert.match(rates.text, /Since this page opened: 3 starts, 1 failure\./)
    // The per-minute chart holds them, in the minutes they happened.
    await page.waitForFunction(() => {
      const u = document.querySelector('#chart-rates').uplot
      const sum = ys => ys.reduce((a, b) => a + (b || 0), 0)
      return u && sum(u.data[1]) === 3 && sum(u.data[2]) === 1
    }, null, WAIT)
    const perMinute = await page.evaluate(() => {
      const u = document.querySelector('#chart-rates').uplot
      return { labels: u.series.slice(1).map(s => s.label), minutes: u.data[0].length }
    })
    assert.deepEqual(perMinute.labels, ['starts', 'failures'])
    // The phase chart's last point of each phase is the current count.
    const last = await page.evaluate(() => {
      const u = document.querySelector('#chart-phases').uplot
      return Object.fromEntries(u.series.slice(1).map((s, i) => [s.label, u.data[i + 1][u.data[i + 1].length - 1]]))
    })
    for (const [ph, n] of Object.entries(counts)) assert.equal(last[ph], n, `${ph}: ${JSON.stringify(last)}`)
    assert.ok(last.Provisioning === 0, 'Provisioning was seen, and is 0 now')
    // Slowest starts, slowest first; ui-alpha's is from its creation to Running (status.since).
    const rows = await page.$$eval('#slow-starts tbody tr', trs => trs.map(tr => ({ name: tr.dataset.project, ms: Number(tr.dataset.ms), text: tr.cells[2].textContent })))
    assert.deepEqual(rows.map(r => r.name).sort(), ['ui-alpha', 'ui-gamma', 'ui-ha'])
    for (let i = 1; i < rows.length; ++i) assert.ok(rows[i - 1].ms >= rows[i].ms, JSON.stringify(rows))
    for (const r of rows) assert.match(r.text, DURATION)
    const history = (await steward.api('GET', '/v1/projects/ui-alpha/history')).body.items
    const created = Date.parse(history.find(i => i.kind === 'operation').at)
    const running = Date.parse(history.find(i => i.kind === 'phase' && i.summary === 'Running' && i.generation === 1).at)
    const alpha = rows.find(r => r.name === 'ui-alpha')
    assert.ok(Math.abs(alpha.ms - (running - created)) <= 50, `ui-alpha's start: ${alpha.ms} ms on the page, ${running - created} ms by its history`)
    if (shots) await page.screenshot({ path: path.join(shots, 'dashboard-fleet.png'), fullPage: true })
    await page.click('#nav-projects')
    await page.waitForSelector('#projects', { state: 'visible', ...WAIT })
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
    // The chart library came from Steward (compiled into the binary), and nothing broke the CSP.
    assert.ok(requests.some(r => r.url === `${origin}/ui/uplot.js`), 'uplot.js loaded from /ui')
    assert.ok(requests.some(r => r.url === `${origin}/ui/charts.js`), 'charts.js loaded from /ui')
    assert.deepEqual(await page.evaluate(() => window.__cspViolations), [])
    assert.deepEqual(cspConsole, [])
  })
})
