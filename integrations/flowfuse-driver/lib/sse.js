'use strict'
// A parser of the text/event-stream format (the WHATWG HTML standard, "Server-sent events"):
// fields `event`, `data` (several lines joined by "\n"), `id`; lines starting with ':' are
// comments; a blank line dispatches the event. Lines may end in \n, \r\n or \r, and a chunk may
// end anywhere, even between \r and \n.

class SseParser {
  constructor (onEvent) {
    this._onEvent = onEvent
    this._buf = ''
    this._skipLf = false
    this._reset()
  }

  _reset () {
    this._event = ''
    this._data = []
    this._id = undefined
  }

  push (chunk) {
    let text = this._buf + chunk
    if (this._skipLf && text.startsWith('\n')) text = text.slice(1)
    this._skipLf = false
    let start = 0
    for (let i = 0; i < text.length; i++) {
      const c = text[i]
      if (c !== '\n' && c !== '\r') continue
      this._line(text.slice(start, i))
      if (c === '\r') {
        if (i + 1 < text.length) {
          if (text[i + 1] === '\n') i++
        } else {
          this._skipLf = true
        }
      }
      start = i + 1
    }
    this._buf = text.slice(start)
  }

  _line (line) {
    if (line === '') {
      if (this._data.length > 0 || this._event) {
        this._onEvent({ event: this._event || 'message', id: this._id, data: this._data.join('\n') })
      }
      this._reset()
      return
    }
    if (line[0] === ':') return
    const colon = line.indexOf(':')
    const field = colon < 0 ? line : line.slice(0, colon)
    let value = colon < 0 ? '' : line.slice(colon + 1)
    if (value[0] === ' ') value = value.slice(1)
    if (field === 'event') this._event = value
    else if (field === 'data') this._data.push(value)
    else if (field === 'id') this._id = value
  }
}

module.exports = { SseParser }
