// The runs list: every run the service knows, polled, each with its state and figures; a click opens it.
import { api, clearError, reportError, shownErrorKind } from './api.js';
import { $, clear, counted, el, fmtCost, fmtDuration, fmtInt, fmtRatio } from './dom.js';
import { app } from './state.js';

export async function refreshRuns() {
  let data;
  try {
    data = await api('/api/runs');
  } catch (err) {
    reportError(err);
    if (err.status === 401) { clearInterval(app.runsTimer); app.runsTimer = null; }
    return;
  }
  if (shownErrorKind() === 'network') clearError(); // the service answers again
  app.runs = data.runs || [];
  app.workspaces = data.workspaces || [];
  renderRuns();
  if (app.view) app.view.takeRunInfo(app.runs.find((r) => r.run_id === app.view.runId));
}

export function renderRuns() {
  const list = $('runs');
  clear(list);
  $('runs-empty').hidden = app.runs.length > 0;
  const workspaces = new Set(app.workspaces);
  for (const run of app.runs) {
    workspaces.add(run.workspace);
    const steps = run.steps_total === null || run.steps_total === undefined ? '' : `${run.steps_done}/${counted(run.steps_total, 'step')}`;
    const item = el('li', { 'data-run': run.run_id, class: app.view && app.view.runId === run.run_id ? 'selected' : null,
      title: `${run.objective}\n${run.workspace}\n${run.run_id}${run.reason ? '\n' + run.reason : ''}` },
      el('div', { class: 'line1' },
        el('span', { class: 'badge', 'data-state': run.state, text: run.state.replace('_', ' ') }),
        el('span', { class: 'obj', text: run.objective })),
      el('div', { class: 'line2' },
        el('span', { class: 'cost', text: fmtCost(run.cost_usd) }),
        el('span', { text: `${fmtInt(run.requests)} req` }),
        el('span', { text: `cache ${fmtRatio(run.cache_hit_ratio)}` }),
        el('span', { text: fmtDuration(run.duration_s) }),
        el('span', { text: steps })));
    item.addEventListener('click', () => { location.hash = '#run=' + encodeURIComponent(run.run_id); });
    list.append(item);
  }
  const options = $('workspaces');
  clear(options);
  for (const ws of workspaces) options.append(el('option', { value: ws }));
  const field = $('f-workspace');
  if (!field.value && workspaces.size > 0) field.value = app.workspaces[0] || [...workspaces][0];
}
