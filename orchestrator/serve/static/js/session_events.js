// How the session events of a goal's planner and executor (sessions/events.py) and the service's own last event
// (the summary, or the error that stopped the run) show in a run's view: one renderer per kind.
import { $, fmtCost } from './dom.js';
import { toolFinished, toolStarted } from './tools.js';

export const SESSION_EVENTS = {
  request_started(view, e) {
    const p = view.paneFor(e);
    p.setModel(e.model);
    p.breakSegment();
  },
  stream(view, e) {
    const s = e.event || {};
    const p = view.paneFor(e);
    if (s.kind === 'reasoning_delta') p.append('reasoning', s.text);
    else if (s.kind === 'content_delta') p.append('content', s.text);
    else if (s.kind === 'stream_restarted') p.line('tool err', `stream restarted${s.reason ? ': ' + s.reason : ''}`);
  },
  usage(view, e) { view.addRequest(e); },
  cache() { /* the figures come with usage */ },
  tool_started(view, e) {
    const shown = toolStarted(e);
    view.toolCalls.set(e.call_id, shown.what);
    view.paneFor(e).block('tool', shown.head, shown.rows);
  },
  tool_finished(view, e) {
    const shown = toolFinished(e, view.toolCalls.get(e.call_id));
    view.toolCalls.delete(e.call_id);
    view.paneFor(e).block(shown.ok ? 'tool ok' : 'tool err', shown.head, shown.rows);
  },
  repair(view, e, id) { view.log(id, `repair ${e.repair} (${e.tool}): ${e.detail}`); },
  compaction(view, e, id) { view.log(id, `compaction of ${e.session}: ${e.reason}`); },
  journal_recovered(view, e, id) { view.log(id, `${e.session}: ${e.message}`); },
  turn_finished(view, e) {
    view.paneFor(e).line('tool', `turn ${e.status} · ${e.requests} requests · ${fmtCost(e.cost_usd)}`);
  },
};

export const SERVICE_EVENTS = {
  summary(view, e) { view.takeSummary(e); },
  error(view, e, id) {
    if (!$('g-reason').textContent.includes(e.error || '')) $('g-reason').textContent = `stopped by an error: ${e.error || ''}`;
    view.log(id, 'error: ' + view.brief(e.error || ''));
  },
};
