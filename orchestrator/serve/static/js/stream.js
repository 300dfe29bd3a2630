// A run's event stream (GET /api/runs/{id}/events, server-sent events named by kind). The kinds to listen for come
// from the service (GET /api/event-kinds, read from the event models): a kind the page has no renderer for is still
// received, and shown by its name.
import { api, TOKEN } from './api.js';
import { $ } from './dom.js';
import { app } from './state.js';

let kinds = null;
export function eventKinds() {
  if (!kinds) {
    kinds = api('/api/event-kinds').then((k) => [...k.goal, ...k.session, ...k.service]);
    kinds.catch(() => { kinds = null; }); // asked again next time
  }
  return kinds;
}

export function setConn(state, text) {
  const c = $('conn');
  c.dataset.state = state;
  c.textContent = text;
}

// `view` gets each new event once, in order (`view.apply(event, id)`), and `view.streamEnded()` after the last one
export function connect(view, names) {
  const url = `/api/runs/${encodeURIComponent(view.runId)}/events?token=${encodeURIComponent(TOKEN)}`;
  const source = new EventSource(url);
  const current = () => app.view === view;
  setConn('live', 'connecting…');
  source.onopen = () => { if (current()) setConn('live', 'live'); };
  source.onerror = () => {
    if (!current() || view.ended) return;
    if (source.readyState === EventSource.CLOSED) {
      setConn('lost', 'disconnected');
      view.refreshDetail(); // says why (401, 404, the service gone) in the error box
    } else {
      setConn('lost', 'reconnecting…'); // EventSource reconnects by itself, sending Last-Event-ID
      view.reconnects += 1;
      $('events').dataset.reconnects = String(view.reconnects);
    }
  };
  const onMessage = (msg) => {
    if (!current() || !(msg instanceof MessageEvent)) return; // (a lost connection also fires 'error')
    const id = Number(msg.lastEventId);
    if (Number.isFinite(id) && id > 0) {
      if (id <= view.lastId) return; // already shown (a reconnect never repeats one)
      view.lastId = id;
    }
    view.received += 1;
    const list = $('events');
    list.dataset.received = String(view.received);
    list.dataset.last = String(view.lastId);
    let event;
    try { event = JSON.parse(msg.data); } catch (_) { return; }
    if (!event || typeof event !== 'object') return;
    view.apply(event, id);
  };
  for (const kind of names) source.addEventListener(kind, onMessage);
  source.addEventListener('end', () => {
    view.ended = true;
    source.close();
    setConn('idle', 'stream ended');
    view.streamEnded();
  });
  return source;
}
