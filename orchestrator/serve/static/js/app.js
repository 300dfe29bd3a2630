// The Reasonix dashboard: runs, a live goal view and the plan review, on the service's JSON API and its event stream.
// Plain JavaScript modules, no build step, nothing fetched from elsewhere (the page's loader fetches each module
// with the token). Every piece of text that comes from the model, a tool, a plan or the server is inserted with
// textContent / createTextNode: no module parses HTML.
import { api, clearError, NEEDS_TOKEN, reportError, showError, shownErrorKind, TOKEN } from './api.js';
import { $, fmtDuration } from './dom.js';
import { wireRunButtons } from './review.js';
import { RunView } from './run_view.js';
import { refreshRuns, renderRuns } from './runs.js';
import { app } from './state.js';

function openRun(runId, force) {
  if (app.view && app.view.runId === runId && !force) return;
  if (app.view) app.view.close();
  app.view = new RunView(runId);
  $('goal').hidden = false;
  $('new-goal').hidden = true;
  renderRuns();
  app.view.start();
}

function route() {
  const hash = location.hash.slice(1);
  if (hash === 'new') {
    $('new-goal').hidden = false;
    $('goal').hidden = !app.view;
    $('f-workspace').focus();
    return;
  }
  $('new-goal').hidden = true;
  const m = /^run=(.+)$/.exec(hash);
  if (m) openRun(decodeURIComponent(m[1]), false);
}

function wire() {
  wireRunButtons(openRun);
  $('error').addEventListener('click', () => { if (shownErrorKind() !== 'token') clearError(); });
  $('new-goal-btn').addEventListener('click', () => { location.hash = '#new'; });
  $('f-close').addEventListener('click', () => { location.hash = app.view ? '#run=' + encodeURIComponent(app.view.runId) : ''; });
  $('goal-form').addEventListener('submit', async (ev) => {
    ev.preventDefault();
    clearError();
    const body = { workspace: $('f-workspace').value.trim(), objective: $('f-objective').value.trim(), review: $('f-review').checked };
    if ($('f-preset').value) body.preset = $('f-preset').value;
    const budget = parseFloat($('f-budget').value);
    if (Number.isFinite(budget) && budget > 0) body.budget_usd = budget;
    const maxRequests = parseInt($('f-max-requests').value, 10);
    if (Number.isFinite(maxRequests) && maxRequests > 0) body.max_requests = maxRequests;
    $('f-start').disabled = true;
    try {
      const created = await api('/api/goals', { method: 'POST', body });
      $('f-objective').value = '';
      location.hash = '#run=' + encodeURIComponent(created.run_id);
      refreshRuns();
    } catch (err) {
      reportError(err);
    } finally {
      $('f-start').disabled = false;
    }
  });
  window.addEventListener('hashchange', route);
}

wire();
if (!TOKEN) {
  showError(NEEDS_TOKEN, '', 'token');
} else {
  refreshRuns().then(() => {
    if (!location.hash && app.runs.length > 0) location.hash = '#run=' + encodeURIComponent(app.runs[0].run_id);
    else if (!location.hash) location.hash = '#new';
    else route();
  });
  app.runsTimer = setInterval(refreshRuns, 2500);
  setInterval(() => { // a live run's duration goes on between two polls
    const d = app.view && app.view.duration;
    if (d && d.live && app.view.live) $('g-duration').textContent = fmtDuration(d.seconds + (performance.now() - d.at) / 1000);
  }, 1000);
}
