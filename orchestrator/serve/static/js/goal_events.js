// How each goal event (orchestrator/events.py) shows in a run's view: one renderer per kind. The service lists the
// kinds (GET /api/event-kinds) and tests/orchestrator/test_event_vocabulary.py holds that each has a renderer here.
import { clip, counted } from './dom.js';
import { refreshRuns } from './runs.js';

export const GOAL_EVENTS = {
  goal_state(view, e, id) {
    view.setState(e.state, e.reason);
    view.log(id, `state ${e.state}${e.reason ? ': ' + view.brief(e.reason) : ''}`);
    view.scheduleDetail();
  },
  plan_proposed(view, e, id) {
    view.setPlan(e.plan, true);
    view.log(id, `plan revision ${e.revision} proposed (${counted(((e.plan || {}).steps || []).length, 'step')})`);
  },
  plan_rejected(view, e, id) {
    view.log(id, `plan rejected (attempt ${e.attempt}): ${(e.errors || []).join('; ')}`);
  },
  plan_revised(view, e, id) {
    view.log(id, `plan revised to revision ${e.revision}${e.reason ? ': ' + e.reason : ''}`);
    view.scheduleDetail();
  },
  review(view, e, id) {
    view.log(id, `review: ${e.decision}${e.automatic ? ' (automatic)' : ''}${e.feedback ? ' — ' + e.feedback : ''}`);
    view.scheduleDetail();
  },
  step_started(view, e, id) {
    view.statuses.set(e.step_id, 'running');
    if (e.title) view.titles.set(e.step_id, e.title);
    view.currentStep = e.step_id;
    view.pane('step:' + e.step_id, e.step_id, e.model).line('tool', `attempt ${e.attempt} on ${e.model}`);
    view.redrawPlan();
    view.log(id, `step ${e.step_id} started (attempt ${e.attempt}, ${e.model})`);
  },
  step_reported(view, e, id) {
    if (e.status && e.status !== 'done') view.statuses.set(e.step_id, e.status);
    view.pane('step:' + e.step_id, e.step_id).line('tool', `reported ${e.status}: ${e.summary}`);
    view.redrawPlan();
    view.log(id, `step ${e.step_id} reported ${e.status}: ${e.summary}`);
  },
  step_verified(view, e, id) {
    view.statuses.set(e.step_id, e.ok ? 'done' : 'failed');
    const p = view.pane('step:' + e.step_id, e.step_id);
    for (const o of e.outcomes || []) {
      p.line(o.ok ? 'tool ok' : 'tool err', `${o.ok ? '✓' : '✗'} verify ${o.command} → exit ${o.exit_code}${o.timed_out ? ' (timed out)' : ''}`);
      if (!o.ok && o.output) p.line('tool err', clip(o.output, 2000));
    }
    p.setActive(false);
    view.redrawPlan();
    view.log(id, `step ${e.step_id} ${e.ok ? 'verified' : 'failed verification'}`);
  },
  wave_started(view, e, id) {
    view.log(id, `parallel wave: ${(e.step_ids || []).join(', ')} start at once, each in its own branch`);
  },
  branch_merged(view, e, id) {
    const p = view.pane('step:' + e.step_id, e.step_id);
    p.line('tool ok', `merged into the workspace${e.changed && e.changed.length ? ': ' + e.changed.join(', ') : ''}`);
    p.setActive(false);
    view.log(id, `step ${e.step_id} merged`);
  },
  branch_rerun(view, e, id) {
    view.pane('step:' + e.step_id, e.step_id).line('tool err', `not merged, runs again alone: ${e.reason}`);
    view.log(id, `step ${e.step_id} runs again: ${e.reason}`);
  },
  escalation(view, e, id) {
    view.escalations.add(e, view.currentStep);
    view.log(id, `escalation ${e.session}: ${e.from_model} → ${e.to_model}: ${e.reason}`);
  },
  pro_asked_for_pro(view, e, id) {
    view.escalations.add({ session: e.session, trigger: 'pro asked for pro', reason: e.reason, from_model: e.model, to_model: e.model, flash_cost_usd: 0 }, view.currentStep);
    view.log(id, `pro asked for pro (${e.session}): ${e.reason}`);
  },
  budget_warning(view, e, id) {
    view.log(id, `budget warning: ${e.resource} ${e.used} of ${e.limit}`);
  },
  goal_waiting(view, e, id) {
    view.log(id, `waiting ${Math.round(e.wait_s)} s (outage ${e.attempt}), then going on: ${view.brief(e.reason)}`);
  },
  subagent_finished(view, e, id) {
    const prompt = e.cache_hit_tokens + e.cache_miss_tokens;
    const ratio = prompt ? ` (${Math.round((100 * e.cache_hit_tokens) / prompt)}%)` : '';
    const merged = e.merged && e.merged.length ? ` · merged ${e.merged.join(', ')}` : '';
    view.log(id, `subagent ${e.session} (${e.read_only ? 'read-only' : 'writing'}) ${e.ok ? 'done' : 'stopped'} · `
      + `${e.requests} requests · $${e.cost_usd.toFixed(4)} · cache ${e.cache_hit_tokens} hit / ${e.cache_miss_tokens} miss`
      + `${ratio} · ${e.escalations} escalations${merged}${e.reason ? ': ' + view.brief(e.reason) : ''}`);
  },
  goal_finished(view, e, id) {
    view.setState(e.status, e.summary);
    view.live = false;
    for (const p of view.panes.values()) p.setActive(false);
    view.log(id, `goal ${e.status}: ${view.brief(e.summary)}`);
    view.scheduleDetail();
    refreshRuns();
  },
};
