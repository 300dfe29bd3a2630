// One run's live view: its state and figures, the plan graph, the request chart, a pane per step or session, and
// the event list. Events are shown by the renderers of goal_events.js and session_events.js, by kind.
import { api, reportError } from './api.js';
import { drawChart } from './chart.js';
import { $, clear, clip, el, fmtCost, fmtDuration, fmtInt, fmtRatio } from './dom.js';
import { Escalations } from './escalations.js';
import { GOAL_EVENTS } from './goal_events.js';
import { drawPlan } from './graph.js';
import { Pane } from './pane.js';
import { SERVICE_EVENTS, SESSION_EVENTS } from './session_events.js';
import { app, TERMINAL } from './state.js';
import { showStep } from './step_detail.js';
import { connect, eventKinds } from './stream.js';

const RENDERERS = { ...SESSION_EVENTS, ...SERVICE_EVENTS, ...GOAL_EVENTS };

export class RunView {
  constructor(runId) {
    this.runId = runId;
    this.plan = null;
    this.statuses = new Map();
    this.titles = new Map();
    this.requests = [];
    this.cost = 0;
    this.hit = 0;
    this.prompt = 0;
    this.panes = new Map();
    this.currentStep = null;
    this.toolCalls = new Map(); // call id -> the call in short, from its start to its end
    this.lastId = 0;
    this.received = 0;
    this.reconnects = 0;
    this.state = null;
    this.live = true;
    this.summary = null;
    this.source = null;
    this.detailTimer = null;
    this.chartPending = false;
    this.planEdited = false;
    this.ended = false;
    this.shownStep = null;
    this.duration = null;
    for (const id of ['live', 'events', 'chart', 'plan-graph']) clear($(id));
    this.escalations = new Escalations();
    $('g-run').textContent = runId;
    for (const id of ['g-objective', 'g-reason', 'g-hint', 'g-state']) $(id).textContent = '';
    for (const id of ['r-plan', 'r-feedback']) $(id).value = '';
    for (const id of ['r-error', 'review', 'step-detail', 'g-undo']) $(id).hidden = true;
    for (const id of ['g-steps', 'g-duration']) $(id).textContent = '–';
    $('g-state').dataset.state = '';
    this.setFigures(0, 0, null);
    drawChart($('chart'), []);
  }

  async start() {
    await this.refreshDetail();
    let names;
    try {
      names = await eventKinds();
    } catch (err) {
      if (app.view === this) reportError(err);
      return;
    }
    if (app.view === this) this.source = connect(this, names);
  }

  close() {
    if (this.source) this.source.close();
    this.source = null;
    clearTimeout(this.detailTimer);
  }

  apply(e, id) {
    const kind = e.kind || 'message';
    const render = Object.hasOwn(RENDERERS, kind) ? RENDERERS[kind] : null;
    if (render) render(this, e, id);
    else this.log(id, kind); // a kind this page does not know yet: named, not dropped
  }

  streamEnded() {
    this.refreshDetail();
    this.renderChart();
  }

  // the pane of a session event: its step when the event names one, else the executor's running step
  paneFor(e) {
    const stepId = e.step_id || (e.session === 'executor' ? this.currentStep : null);
    if (stepId) return this.pane('step:' + stepId, stepId);
    return this.pane('session:' + e.session, null, null, e.session);
  }

  pane(key, stepId, model, label) {
    let p = this.panes.get(key);
    if (!p) {
      p = new Pane(stepId ? `${stepId} · ${this.titles.get(stepId) || this.stepTitle(stepId)}` : label || key, key);
      this.panes.set(key, p);
      $('live').prepend(p.root);
    }
    if (model) p.setModel(model);
    for (const other of this.panes.values()) if (other !== p && !other.key.startsWith('step:')) other.setActive(false);
    if (this.live) p.setActive(true);
    return p;
  }

  stepTitle(stepId) {
    const s = this.plan && (this.plan.steps || []).find((x) => x.id === stepId);
    return s ? s.title : '';
  }

  addRequest(e) {
    const u = e.usage || {};
    const hit = u.prompt_cache_hit_tokens || 0, miss = u.prompt_cache_miss_tokens || 0;
    this.cost += e.cost_usd || 0;
    this.hit += hit;
    this.prompt += u.prompt_tokens || hit + miss;
    const pro = /pro/.test(e.model || '');
    this.requests.push({ session: e.session, model: e.model, hit, miss, cost: e.cost_usd || 0, cumCost: this.cost, pro });
    this.escalations.usage(e);
    if (!this.summary) this.setFigures(this.cost, this.requests.length, this.prompt ? this.hit / this.prompt : null);
    this.renderChart();
  }

  renderChart() {
    if (this.chartPending) return;
    this.chartPending = true;
    requestAnimationFrame(() => { this.chartPending = false; if (app.view === this) drawChart($('chart'), this.requests); });
  }

  takeSummary(summary) {
    this.summary = summary;
    this.setFigures(summary.cost_usd, summary.requests, summary.cache_hit_ratio);
    if (summary.steps_total !== null && summary.steps_total !== undefined) $('g-steps').textContent = `${summary.steps_done} / ${summary.steps_total}`;
  }

  setFigures(cost, requests, ratio) {
    const c = $('g-cost'), r = $('g-requests'), h = $('g-cache');
    c.textContent = fmtCost(cost); c.dataset.value = String(cost);
    r.textContent = fmtInt(requests); r.dataset.value = String(requests);
    h.textContent = fmtRatio(ratio); h.dataset.value = ratio === null || ratio === undefined ? '' : String(ratio);
  }

  setState(state, reason) {
    this.state = state;
    const badge = $('g-state');
    badge.textContent = String(state).replace('_', ' ');
    badge.dataset.state = state;
    if (reason !== undefined) $('g-reason').textContent = reason || '';
    this.renderActions();
  }

  setPlan(plan, fromEvent) {
    if (!plan) return;
    this.plan = plan;
    if (fromEvent) for (const s of plan.steps || []) if (!this.statuses.has(s.id) || s.status !== 'pending') this.statuses.set(s.id, s.status || 'pending');
    for (const s of plan.steps || []) this.titles.set(s.id, s.title || '');
    if (!this.planEdited) $('r-plan').value = JSON.stringify(plan, null, 2);
    this.redrawPlan();
  }

  redrawPlan() {
    drawPlan($('plan-graph'), this.plan, this.statuses, this.live, (id) => this.showStep(id));
    if (this.shownStep) this.showStep(this.shownStep);
  }

  showStep(stepId) {
    const s = this.plan && (this.plan.steps || []).find((x) => x.id === stepId);
    this.shownStep = s ? stepId : null;
    showStep(s, s ? this.statuses.get(s.id) || s.status || 'pending' : null, () => { this.shownStep = null; });
  }

  scheduleDetail() {
    clearTimeout(this.detailTimer);
    this.detailTimer = setTimeout(() => this.refreshDetail(), 150);
  }

  async refreshDetail() {
    let d;
    try {
      d = await api(`/api/runs/${encodeURIComponent(this.runId)}`);
    } catch (err) {
      if (app.view === this) reportError(err);
      return;
    }
    if (app.view !== this) return;
    this.detail = d;
    this.live = d.live;
    $('g-objective').textContent = d.objective;
    this.setState(d.state, d.reason);
    if (d.plan) {
      for (const s of d.plan.steps || []) this.statuses.set(s.id, s.status || 'pending');
      this.setPlan(d.plan, false);
    } else {
      this.redrawPlan();
    }
    this.takeRunInfo(d);
    if (d.summary) this.takeSummary(d.summary);
    $('review').hidden = !d.awaiting_review;
    $('g-hint').textContent = d.resume_hint || '';
    this.renderActions();
  }

  takeRunInfo(info) {
    if (!info) return;
    const now = performance.now(), was = this.duration;
    // the run's recorded time moves only when it saves; while it is live the page counts on from what it showed
    const ticking = was && was.live && info.live ? was.seconds + (now - was.at) / 1000 : 0;
    const seconds = Math.max(Number(info.duration_s) || 0, ticking);
    this.duration = { seconds, at: now, live: info.live };
    $('g-duration').textContent = fmtDuration(seconds);
    if (!this.summary && info.steps_total !== null && info.steps_total !== undefined) $('g-steps').textContent = `${info.steps_done} / ${info.steps_total}`;
    if (info.state && info.state !== this.state) this.scheduleDetail();
  }

  renderActions() {
    const terminal = TERMINAL.has(this.state);
    $('g-pause').hidden = !(this.live && !terminal);
    const resumable = this.state === 'paused' || (!this.live && this.detail && !!this.detail.resume_hint && this.state !== 'complete');
    $('g-resume').hidden = !resumable;
    $('g-resume-budget-label').hidden = !resumable;
    const stepsDone = this.plan ? (this.plan.steps || []).filter((s) => (this.statuses.get(s.id) || s.status) === 'done').length : 0;
    $('g-undo').hidden = this.live || stepsDone === 0;
  }

  // a long text the page already shows in full under the objective: the event list says so instead of repeating it
  brief(text) {
    const s = String(text || '');
    const shown = $('g-reason').textContent;
    return s.length > 80 && shown.includes(s.slice(0, 80)) ? clip(s, 80) + ' (in full above)' : s;
  }

  log(id, text) {
    const list = $('events');
    list.append(el('li', {}, el('span', { class: 'eid', text: id > 0 ? '#' + id : '' }), text));
    while (list.childElementCount > 400) list.removeChild(list.firstChild);
    list.scrollTop = list.scrollHeight;
  }
}
