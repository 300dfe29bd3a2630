// The plan review and the run's buttons: approve, revise with feedback, edit the plan, cancel; pause, resume, undo.
import { api, reportError } from './api.js';
import { $ } from './dom.js';
import { refreshRuns } from './runs.js';
import { app } from './state.js';

async function review(decision, extra) {
  if (!app.view) return;
  const box = $('r-error');
  box.hidden = true;
  const buttons = document.querySelectorAll('#review button');
  buttons.forEach((b) => { b.disabled = true; });
  try {
    await api(`/api/runs/${encodeURIComponent(app.view.runId)}/review`, { method: 'POST', body: { decision, ...extra } });
    app.view.planEdited = false;
    $('review').hidden = true;
    app.view.scheduleDetail();
  } catch (err) {
    box.textContent = err.hint ? `${err.message}\n${err.hint}` : err.message;
    box.hidden = false;
    if (err.status === 401) reportError(err);
  } finally {
    buttons.forEach((b) => { b.disabled = false; });
  }
}

// the review's buttons, and the run's: `openRun(runId, true)` shows a resumed run afresh
export function wireRunButtons(openRun) {
  $('r-approve').addEventListener('click', () => review('approve', {}));
  $('r-cancel').addEventListener('click', () => review('cancel', {}));
  $('r-revise').addEventListener('click', () => {
    const feedback = $('r-feedback').value.trim();
    if (!feedback) { $('r-error').textContent = 'Write what the planner should change, then press “Revise with feedback”.'; $('r-error').hidden = false; return; }
    review('revise', { feedback });
  });
  $('r-plan').addEventListener('input', () => { if (app.view) app.view.planEdited = true; });
  $('r-edit').addEventListener('click', () => {
    let plan;
    try {
      plan = JSON.parse($('r-plan').value);
    } catch (err) {
      $('r-error').textContent = `The edited plan is not valid JSON: ${err.message}`;
      $('r-error').hidden = false;
      return;
    }
    review('edit', { plan });
  });
  const runPath = (action) => `/api/runs/${encodeURIComponent(app.view.runId)}/${action}`;
  $('g-pause').addEventListener('click', async () => {
    try { await api(runPath('pause'), { method: 'POST', body: {} }); app.view.scheduleDetail(); } catch (err) { reportError(err); }
  });
  $('g-resume').addEventListener('click', async () => {
    const budget = parseFloat($('g-resume-budget').value);
    const body = Number.isFinite(budget) && budget > 0 ? { budget_usd: budget } : {};
    try {
      await api(runPath('resume'), { method: 'POST', body });
      openRun(app.view.runId, true);
    } catch (err) { reportError(err); }
  });
  $('g-undo').addEventListener('click', async () => {
    if (!app.view) return;
    try {
      const result = await api(runPath('undo'), { method: 'POST', body: {} });
      const restored = result.restored || [], kept = result.kept || [];
      $('g-hint').textContent = (restored.length ? `undone: ${restored.join(', ')} put back` : 'undone: nothing to put back') +
        (kept.length ? `; kept as you changed them: ${kept.join(', ')}` : '');
      refreshRuns();
    } catch (err) { reportError(err); }
  });
}
