'use strict'
// Samplers the lifecycle tests run beside the platform's calls.

// Every `everyMs`, the ready pods of `projects` and the token each holds: a pod holding a token
// the platform has revoked is a violation (the bug that started Steward). stop() answers
// {samples, violations}; with `t` (a test's context) it is also stopped when the test ends.
function sampleTokens (steward, projects, { everyMs = 150, t } = {}) {
  let running = true
  const out = { samples: 0, violations: [] }
  const loop = (async () => {
    while (running) {
      for (const p of projects) {
        let pods
        try {
          pods = await steward.readyPods(p.id)
        } catch (err) {
          continue // a pod gone between the list and its env; the next round sees the rest
        }
        for (const pod of pods) {
          out.samples++
          const t = pod.env.FORGE_PROJECT_TOKEN
          if (t && p.revoked.has(t)) out.violations.push(`${pod.name} holds a revoked token`)
        }
      }
      await new Promise(resolve => setTimeout(resolve, everyMs))
    }
  })()
  const stop = async () => { running = false; await loop; return out }
  if (t) t.after(stop)
  return { stop }
}

module.exports = { sampleTokens }
