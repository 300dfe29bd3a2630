// The Reasonix dashboard: runs, a live goal view and the plan review, on the service's JSON API and its event stream.
// Plain JavaScript, no build step, nothing fetched from elsewhere. Every piece of text that comes from the model, a
// tool, a plan or the server is inserted with textContent / createTextNode: this file never parses HTML.
(() => {
  'use strict';

  // ------------------------------------------------------------------ the access token (see docs/serve-api.md)
  const TOKEN_KEY = 'reasonix-serve-token';
  const NEEDS_TOKEN =
    'This page needs the link with the token that `reasonix serve` printed ' +
    '(http://…/?token=…). Open that link again; the token is not kept after this tab closes.';

  function takeToken() {
    const params = new URLSearchParams(location.search);
    let token = params.get('token');
    if (token) {
      try { sessionStorage.setItem(TOKEN_KEY, token); } catch (_) { /* storage disabled: memory only */ }
      params.delete('token');
      const query = params.toString();
      history.replaceState(history.state, '', location.pathname + (query ? '?' + query : '') + location.hash);
    } else {
      try { token = sessionStorage.getItem(TOKEN_KEY); } catch (_) { token = null; }
    }
    return token || '';
  }
  const TOKEN = takeToken();

  // ------------------------------------------------------------------ small helpers
  const $ = (id) => document.getElementById(id);
  const SVG_NS = 'http://www.w3.org/2000/svg';

  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    setAttrs(node, attrs);
    for (const child of children) node.append(child instanceof Node ? child : document.createTextNode(String(child)));
    return node;
  }
  function svg(tag, attrs, ...children) {
    const node = document.createElementNS(SVG_NS, tag);
    setAttrs(node, attrs);
    for (const child of children) node.append(child instanceof Node ? child : document.createTextNode(String(child)));
    return node;
  }
  function setAttrs(node, attrs) {
    for (const [key, value] of Object.entries(attrs || {})) {
      if (value === undefined || value === null || value === false) continue;
      if (key === 'text') node.textContent = String(value);
      else node.setAttribute(key, value === true ? '' : String(value));
    }
  }
  function clear(node) { while (node.firstChild) node.removeChild(node.firstChild); }

  function fmtCost(usd) {
    if (usd === null || usd === undefined) return '–';
    return '$' + Number(usd).toFixed(usd >= 10 ? 2 : 4);
  }
  function fmtRatio(ratio) {
    return ratio === null || ratio === undefined ? '–' : (ratio * 100).toFixed(1) + '%';
  }
  function fmtDuration(seconds) {
    if (seconds === null || seconds === undefined) return '–';
    const s = Math.max(0, Number(seconds));
    if (s < 60) return s.toFixed(1) + ' s';
    const m = Math.floor(s / 60);
    if (m < 60) return m + ' min ' + Math.round(s - m * 60) + ' s';
    return Math.floor(m / 60) + ' h ' + (m % 60) + ' min';
  }
  function fmtInt(n) { return Number(n || 0).toLocaleString('en-US'); }
  function counted(n, noun) { return `${n} ${n === 1 ? noun : noun + 's'}`; }
  function clip(text, max) {
    const s = String(text ?? '');
    return s.length > max ? s.slice(0, max - 1) + '…' : s;
  }

  // ------------------------------------------------------------------ errors shown to the user
  let errorKind = null;
  function showError(message, hint, kind) {
    errorKind = kind || 'other';
    const box = $('error');
    box.textContent = hint ? message + '\n' + hint : message;
    box.hidden = false;
  }
  function clearError() { errorKind = null; $('error').hidden = true; $('error').textContent = ''; }

  class ApiError extends Error {
    constructor(status, message, hint) { super(message); this.status = status; this.hint = hint || ''; }
  }

  async function api(path, options) {
    const opts = options || {};
    const headers = { Accept: 'application/json' };
    if (TOKEN) headers.Authorization = 'Bearer ' + TOKEN;
    let body;
    if (opts.body !== undefined) { headers['Content-Type'] = 'application/json'; body = JSON.stringify(opts.body); }
    let response;
    try {
      response = await fetch(path, { method: opts.method || 'GET', headers, body, cache: 'no-store' });
    } catch (err) {
      throw new ApiError(0, 'The service does not answer: is `reasonix serve` still running?', String(err));
    }
    let data = null;
    try { data = await response.json(); } catch (_) { data = null; }
    if (!response.ok) {
      if (response.status === 401) throw new ApiError(401, NEEDS_TOKEN, (data && data.error) || '');
      const message = (data && data.error) || `${opts.method || 'GET'} ${path} failed with HTTP ${response.status}`;
      throw new ApiError(response.status, message, (data && data.hint) || '');
    }
    return data;
  }

  function reportError(err) {
    if (err instanceof ApiError) showError(err.message, err.hint, err.status === 0 ? 'network' : err.status === 401 ? 'token' : 'api');
    else showError(String(err && err.message ? err.message : err));
  }

  // ------------------------------------------------------------------ the runs list
  const TERMINAL = new Set(['complete', 'blocked', 'paused', 'failed', 'cancelled']);
  let runsTimer = null;
  let knownRuns = [];
  let serviceWorkspaces = []; // the workspaces the service was started with (`reasonix serve --workspace`)

  async function refreshRuns() {
    let data;
    try {
      data = await api('/api/runs');
    } catch (err) {
      reportError(err);
      if (err.status === 401) { clearInterval(runsTimer); runsTimer = null; }
      return;
    }
    if (errorKind === 'network') clearError(); // the service answers again
    knownRuns = data.runs || [];
    serviceWorkspaces = data.workspaces || [];
    renderRuns();
    if (view) view.takeRunInfo(knownRuns.find((r) => r.run_id === view.runId));
  }

  function renderRuns() {
    const list = $('runs');
    clear(list);
    $('runs-empty').hidden = knownRuns.length > 0;
    const workspaces = new Set(serviceWorkspaces);
    for (const run of knownRuns) {
      workspaces.add(run.workspace);
      const steps = run.steps_total === null || run.steps_total === undefined ? '' : `${run.steps_done}/${counted(run.steps_total, 'step')}`;
      const item = el('li', { 'data-run': run.run_id, class: view && view.runId === run.run_id ? 'selected' : null,
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
    if (!field.value && workspaces.size > 0) field.value = serviceWorkspaces[0] || [...workspaces][0];
  }

  // ------------------------------------------------------------------ the plan graph (a layered DAG in SVG)
  const NODE_W = 180, NODE_H = 60, GAP_X = 38, GAP_Y = 14, PAD = 10, MAX_NODES = 400;

  function layoutPlan(steps) {
    const byId = new Map(steps.map((s) => [s.id, s]));
    const depth = new Map();
    const visiting = new Set();
    const depthOf = (id) => {
      if (depth.has(id)) return depth.get(id);
      if (visiting.has(id)) return 0; // a cycle (an invalid plan): draw it anyway
      visiting.add(id);
      let d = 0;
      for (const dep of byId.get(id).depends_on || []) if (byId.has(dep)) d = Math.max(d, depthOf(dep) + 1);
      visiting.delete(id);
      depth.set(id, d);
      return d;
    };
    const columns = [];
    for (const s of steps) (columns[depthOf(s.id)] ||= []).push(s.id);
    const row = new Map();
    columns.forEach((col, c) => {
      if (c > 0) { // order by the mean row of the dependencies: fewer crossing edges
        const key = (id) => {
          const deps = (byId.get(id).depends_on || []).filter((d) => row.has(d));
          return deps.length ? deps.reduce((a, d) => a + row.get(d), 0) / deps.length : 0;
        };
        col.sort((a, b) => key(a) - key(b));
      }
      col.forEach((id, r) => row.set(id, r));
    });
    const pos = new Map();
    for (const [id, d] of depth) pos.set(id, { x: PAD + d * (NODE_W + GAP_X), y: PAD + row.get(id) * (NODE_H + GAP_Y) });
    const rows = Math.max(1, ...columns.map((c) => (c ? c.length : 0)));
    return { pos, width: 2 * PAD + columns.length * (NODE_W + GAP_X) - GAP_X, height: 2 * PAD + rows * (NODE_H + GAP_Y) - GAP_Y };
  }

  // the title in at most `lines` lines of `width` characters, broken at spaces where it can be, the last one clipped
  function wrapTitle(title, width, lines) {
    const out = [];
    let rest = String(title).trim();
    while (rest && out.length < lines) {
      if (out.length === lines - 1 || rest.length <= width) { out.push(clip(rest, width)); break; }
      let cut = rest.lastIndexOf(' ', width);
      if (cut < width / 2) cut = width;
      out.push(rest.slice(0, cut).trimEnd());
      rest = rest.slice(cut).trimStart();
    }
    return out;
  }

  function drawPlan(container, plan, statuses, live, onStep) {
    clear(container);
    if (!plan || !Array.isArray(plan.steps) || plan.steps.length === 0) {
      const text = live ? 'No plan yet: the planner is working.' : 'No plan: the run ended before the planner submitted one.';
      container.append(el('p', { class: 'muted', text }));
      return;
    }
    const steps = plan.steps.slice(0, MAX_NODES);
    const { pos, width, height } = layoutPlan(steps);
    const root = svg('svg', { width, height, viewBox: `0 0 ${width} ${height}`, role: 'img', 'aria-label': 'plan graph' });
    for (const s of steps) {
      const to = pos.get(s.id);
      for (const dep of s.depends_on || []) {
        const from = pos.get(dep);
        if (!from) continue;
        const x1 = from.x + NODE_W, y1 = from.y + NODE_H / 2, x2 = to.x, y2 = to.y + NODE_H / 2, mx = (x1 + x2) / 2;
        root.append(svg('path', { class: 'edge', d: `M${x1},${y1} C${mx},${y1} ${mx},${y2} ${x2 - 4},${y2}`, 'marker-end': 'url(#arrow)' }));
      }
    }
    const defs = svg('defs', {}, svg('marker', { id: 'arrow', viewBox: '0 0 8 8', refX: 4, refY: 4, markerWidth: 7, markerHeight: 7, orient: 'auto' },
      svg('path', { d: 'M0,0 L8,4 L0,8 z', fill: '#9ca3af' })));
    root.prepend(defs);
    for (const s of steps) {
      const p = pos.get(s.id);
      const status = statuses.get(s.id) || s.status || 'pending';
      const g = svg('g', { class: `node st-${status}`, 'data-step': s.id, 'data-status': status, transform: `translate(${p.x},${p.y})` },
        svg('title', { text: `${s.id} · ${s.title || ''}\n${status}` }),
        svg('rect', { width: NODE_W, height: NODE_H, rx: 6 }),
        svg('text', { class: 'sid', x: 8, y: 15, text: clip(s.id, 14) }),
        svg('text', { class: 'status', x: NODE_W - 8, y: 15, 'text-anchor': 'end', text: status }));
      wrapTitle(s.title || '', 27, 2).forEach((line, i) => g.append(svg('text', { class: 'title', x: 8, y: 34 + i * 15, text: line })));
      if (onStep) {
        g.setAttribute('tabindex', '0');
        g.setAttribute('role', 'button');
        g.addEventListener('click', () => onStep(s.id));
        g.addEventListener('keydown', (ev) => { if (ev.key === 'Enter' || ev.key === ' ') { ev.preventDefault(); onStep(s.id); } });
      }
      root.append(g);
    }
    container.append(root);
    if (plan.steps.length > MAX_NODES) {
      container.append(el('p', { class: 'muted', text: `The plan has ${counted(plan.steps.length, 'step')}; the graph shows the first ${MAX_NODES}.` }));
    }
  }

  // ------------------------------------------------------------------ the per-request chart (SVG bars)
  function drawChart(container, requests) {
    clear(container);
    if (requests.length === 0) {
      container.append(el('p', { class: 'muted', text: 'No requests yet.' }));
      return;
    }
    const left = 44, right = 54, top = 12, bottom = 22, plotH = 150;
    const room = Math.max(320, (container.clientWidth || 320) - 4);
    const slot = Math.min(36, Math.max(6, (room - left - right) / requests.length));
    const gap = Math.max(2, Math.round(slot * 0.2)), barW = slot - gap;
    const width = Math.max(room, left + right + requests.length * slot);
    const height = top + plotH + bottom;
    const maxTokens = Math.max(1, ...requests.map((r) => r.hit + r.miss));
    const maxCost = Math.max(1e-9, requests[requests.length - 1].cumCost);
    const root = svg('svg', { width, height, viewBox: `0 0 ${width} ${height}`, role: 'img', 'aria-label': 'tokens and cost per request' });
    const end = left + requests.length * slot;
    root.append(svg('line', { x1: left, y1: top + plotH, x2: end, y2: top + plotH, stroke: '#d1d5db' }));
    root.append(svg('text', { class: 'axis', x: left - 4, y: top + 8, 'text-anchor': 'end', text: fmtTokens(maxTokens) }));
    root.append(svg('text', { class: 'axis', x: left - 4, y: top + plotH, 'text-anchor': 'end', text: '0' }));
    root.append(svg('text', { class: 'axis', x: end + 4, y: top + 8, fill: '#2563eb', text: fmtCost(maxCost) }));
    const points = [];
    requests.forEach((r, i) => {
      const x = left + gap / 2 + i * slot;
      const hitH = (r.hit / maxTokens) * plotH, missH = (r.miss / maxTokens) * plotH;
      const g = svg('g', { class: 'req' + (r.pro ? ' pro' : ''), 'data-hit': r.hit, 'data-miss': r.miss },
        svg('title', { text: `request ${i + 1} · ${r.session} · ${r.model}\ncache hit ${fmtInt(r.hit)} · miss ${fmtInt(r.miss)} tokens\n${fmtCost(r.cost)} (running ${fmtCost(r.cumCost)})` }),
        svg('rect', { class: 'bar-hit', x, y: top + plotH - hitH, width: barW, height: Math.max(0, hitH) }),
        svg('rect', { class: 'bar-miss', x, y: top + plotH - hitH - missH, width: barW, height: Math.max(0, missH) }));
      if (r.pro) g.append(svg('rect', { class: 'bar-pro', x, y: top + plotH - hitH - missH, width: barW, height: hitH + missH, fill: 'none' }));
      root.append(g);
      points.push(`${x + barW / 2},${top + plotH - (r.cumCost / maxCost) * plotH}`);
      if (slot >= 14 || (i + 1) % Math.ceil(14 / slot) === 0) {
        root.append(svg('text', { class: 'axis', x: x + barW / 2, y: top + plotH + 13, 'text-anchor': 'middle', text: String(i + 1) }));
      }
    });
    root.append(svg('polyline', { class: 'cost-line', points: points.join(' ') }));
    container.append(root);
    container.append(el('div', { class: 'chart-key' },
      el('span', {}, el('i', { class: 'key-hit' }), 'cache hit'),
      el('span', {}, el('i', { class: 'key-miss' }), 'cache miss'),
      el('span', {}, el('i', { class: 'key-cost' }), 'running cost'),
      el('span', {}, el('i', { class: 'key-pro' }), 'pro')));
  }
  // a tool call as the terminal shows it: `▸ edit_file calc.py` and the edit as - / + lines, `▸ bash <command>`,
  // rather than its arguments as JSON. The event carries the arguments as one line of JSON cut at 160 characters: what
  // a cut preview no longer holds is not guessed (the path or command is read out of it where it is still whole).
  function toolLines(name, preview) {
    let args = null;
    try { args = JSON.parse(preview); } catch (_) { args = null; }
    const field = (key) => {
      if (args && typeof args[key] === 'string') return args[key];
      const m = new RegExp('"' + key + '": "((?:[^"\\\\]|\\\\.)*)"').exec(preview);
      if (!m) return null;
      try { return JSON.parse('"' + m[1] + '"'); } catch (_) { return null; }
    };
    const path = field('path'), command = field('command');
    const what = command !== null ? command : path;
    if (what === null) return { head: `▸ ${name} ${preview}`, body: [] };
    const body = [];
    if (args && typeof args.old_string === 'string' && typeof args.new_string === 'string') {
      for (const line of args.old_string.split('\n')) body.push(['diff-del', '    - ' + line]);
      for (const line of args.new_string.split('\n')) body.push(['diff-add', '    + ' + line]);
    } else if (args && typeof args.content === 'string') {
      const lines = args.content.split('\n').length - (args.content.endsWith('\n') ? 1 : 0);
      return { head: `▸ ${name} ${what} (${counted(lines, 'line')})`, body };
    } else if (!args) {
      return { head: `▸ ${name} ${what} …`, body };
    }
    return { head: `▸ ${name} ${what}`, body };
  }

  function verifyText(v) {
    const extras = [];
    if (v.expect_exit !== undefined && v.expect_exit !== 0) extras.push(`exit ${v.expect_exit}`);
    if (v.timeout_s !== undefined && v.timeout_s !== null) extras.push(`${v.timeout_s}s`);
    return v.command + (extras.length ? ` (${extras.join(', ')})` : '');
  }
  function fmtTokens(n) { return n >= 10000 ? Math.round(n / 1000) + 'k' : fmtInt(n); }

  // ------------------------------------------------------------------ one run's live view
  const EVENT_KINDS = [
    'goal_state', 'plan_proposed', 'plan_rejected', 'plan_revised', 'review', 'step_started', 'step_reported',
    'step_verified', 'escalation', 'pro_asked_for_pro', 'budget_warning', 'goal_waiting', 'goal_finished', 'request_started', 'stream',
    'usage', 'cache', 'tool_started', 'tool_finished', 'repair', 'compaction', 'journal_recovered', 'turn_finished',
    'summary', 'error', 'message', 'wave_started', 'branch_merged', 'branch_rerun',
  ];
  const PANE_CHARS = 40000;
  let view = null;

  class RunView {
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
      this.escalations = [];
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
      for (const id of ['live', 'events', 'chart', 'plan-graph']) clear($(id));
      clear($('escalations'));
      $('escalations').append(el('li', { class: 'muted', text: 'none' }));
      $('g-run').textContent = runId;
      $('g-objective').textContent = '';
      $('g-reason').textContent = '';
      $('r-plan').value = '';
      $('r-feedback').value = '';
      $('r-error').hidden = true;
      $('review').hidden = true;
      $('step-detail').hidden = true;
      this.shownStep = null;
      for (const id of ['g-steps', 'g-duration']) $(id).textContent = '–';
      $('g-hint').textContent = '';
      $('g-state').textContent = '';
      $('g-state').dataset.state = '';
      $('g-undo').hidden = true;
      this.duration = null;
      this.setFigures(0, 0, null);
      drawChart($('chart'), []);
    }

    async start() {
      await this.refreshDetail();
      if (view !== this) return;
      this.connect();
    }

    close() {
      if (this.source) this.source.close();
      this.source = null;
      clearTimeout(this.detailTimer);
    }

    connect() {
      const url = `/api/runs/${encodeURIComponent(this.runId)}/events?token=${encodeURIComponent(TOKEN)}`;
      const source = new EventSource(url);
      this.source = source;
      setConn('live', 'connecting…');
      source.onopen = () => { if (view === this) setConn('live', 'live'); };
      source.onerror = () => {
        if (view !== this || this.ended) return;
        if (source.readyState === EventSource.CLOSED) {
          setConn('lost', 'disconnected');
          this.refreshDetail(); // says why (401, 404, the service gone) in the error box
        } else {
          setConn('lost', 'reconnecting…'); // EventSource reconnects by itself, sending Last-Event-ID
          this.reconnects += 1;
          $('events').dataset.reconnects = String(this.reconnects);
        }
      };
      for (const kind of EVENT_KINDS) source.addEventListener(kind, (msg) => this.onMessage(msg));
      source.addEventListener('end', () => {
        this.ended = true;
        source.close();
        setConn('idle', 'stream ended');
        this.refreshDetail();
        this.renderChart();
      });
    }

    onMessage(msg) {
      if (view !== this || !(msg instanceof MessageEvent)) return; // (a lost connection also fires 'error')
      const id = Number(msg.lastEventId);
      if (Number.isFinite(id) && id > 0) {
        if (id <= this.lastId) return; // already shown (a reconnect never repeats one)
        this.lastId = id;
      }
      this.received += 1;
      const list = $('events');
      list.dataset.received = String(this.received);
      list.dataset.last = String(this.lastId);
      let event;
      try { event = JSON.parse(msg.data); } catch (_) { return; }
      if (!event || typeof event !== 'object') return;
      this.apply(event, id);
    }

    apply(e, id) {
      const kind = e.kind || 'message';
      switch (kind) {
        case 'goal_state':
          this.setState(e.state, e.reason);
          this.log(id, `state ${e.state}${e.reason ? ': ' + this.brief(e.reason) : ''}`);
          this.scheduleDetail();
          break;
        case 'plan_proposed':
          this.setPlan(e.plan, true);
          this.log(id, `plan revision ${e.revision} proposed (${counted((e.plan.steps || []).length, 'step')})`);
          break;
        case 'plan_revised':
          this.log(id, `plan revised to revision ${e.revision}${e.reason ? ': ' + e.reason : ''}`);
          this.scheduleDetail();
          break;
        case 'plan_rejected':
          this.log(id, `plan rejected (attempt ${e.attempt}): ${(e.errors || []).join('; ')}`);
          break;
        case 'review':
          this.log(id, `review: ${e.decision}${e.automatic ? ' (automatic)' : ''}${e.feedback ? ' — ' + e.feedback : ''}`);
          this.scheduleDetail();
          break;
        case 'step_started':
          this.statuses.set(e.step_id, 'running');
          if (e.title) this.titles.set(e.step_id, e.title);
          this.currentStep = e.step_id;
          this.pane('step:' + e.step_id, e.step_id, e.model).line('tool', `attempt ${e.attempt} on ${e.model}`);
          this.redrawPlan();
          this.log(id, `step ${e.step_id} started (attempt ${e.attempt}, ${e.model})`);
          break;
        case 'step_reported':
          if (e.status && e.status !== 'done') this.statuses.set(e.step_id, e.status);
          this.pane('step:' + e.step_id, e.step_id).line('tool', `reported ${e.status}: ${e.summary}`);
          this.redrawPlan();
          this.log(id, `step ${e.step_id} reported ${e.status}: ${e.summary}`);
          break;
        case 'step_verified': {
          this.statuses.set(e.step_id, e.ok ? 'done' : 'failed');
          const p = this.pane('step:' + e.step_id, e.step_id);
          for (const o of e.outcomes || []) {
            p.line(o.ok ? 'tool ok' : 'tool err', `${o.ok ? '✓' : '✗'} verify ${o.command} → exit ${o.exit_code}${o.timed_out ? ' (timed out)' : ''}`);
            if (!o.ok && o.output) p.line('tool err', clip(o.output, 2000));
          }
          p.setActive(false);
          this.redrawPlan();
          this.log(id, `step ${e.step_id} ${e.ok ? 'verified' : 'failed verification'}`);
          break;
        }
        case 'wave_started':
          this.log(id, `parallel wave: ${(e.step_ids || []).join(', ')} start at once, each in its own branch`);
          break;
        case 'branch_merged': {
          const p = this.pane('step:' + e.step_id, e.step_id);
          p.line('tool ok', `merged into the workspace${e.changed && e.changed.length ? ': ' + e.changed.join(', ') : ''}`);
          p.setActive(false);
          this.log(id, `step ${e.step_id} merged`);
          break;
        }
        case 'branch_rerun':
          this.pane('step:' + e.step_id, e.step_id).line('tool err', `not merged, runs again alone: ${e.reason}`);
          this.log(id, `step ${e.step_id} runs again: ${e.reason}`);
          break;
        case 'escalation':
          this.addEscalation(e);
          this.log(id, `escalation ${e.session}: ${e.from_model} → ${e.to_model}: ${e.reason}`);
          break;
        case 'pro_asked_for_pro':
          this.addEscalation({ session: e.session, trigger: 'pro asked for pro', reason: e.reason, from_model: e.model, to_model: e.model, flash_cost_usd: 0 });
          this.log(id, `pro asked for pro (${e.session}): ${e.reason}`);
          break;
        case 'budget_warning':
          this.log(id, `budget warning: ${e.resource} ${e.used} of ${e.limit}`);
          break;
        case 'goal_waiting':
          this.log(id, `waiting ${Math.round(e.wait_s)} s (outage ${e.attempt}), then going on: ${this.brief(e.reason)}`);
          break;
        case 'goal_finished':
          this.setState(e.status, e.summary);
          this.live = false;
          for (const p of this.panes.values()) p.setActive(false);
          this.log(id, `goal ${e.status}: ${this.brief(e.summary)}`);
          this.scheduleDetail();
          refreshRuns();
          break;
        case 'summary':
          this.takeSummary(e);
          break;
        case 'usage':
          this.addRequest(e);
          break;
        case 'request_started': {
          const p = this.paneFor(e);
          p.setModel(e.model);
          p.breakSegment();
          break;
        }
        case 'stream':
          this.onStream(e);
          break;
        case 'tool_started': {
          const p = this.paneFor(e);
          const shown = toolLines(e.name, e.args_preview || '');
          p.line('tool', shown.head);
          for (const [kind, text] of shown.body) p.line(kind, text);
          break;
        }
        case 'tool_finished':
          this.paneFor(e).line(e.is_error ? 'tool err' : 'tool ok', `${e.is_error ? '✗' : '✓'} ${e.name}: ${clip(e.preview, 400)}`);
          break;
        case 'turn_finished':
          this.paneFor(e).line('tool', `turn ${e.status} · ${e.requests} requests · ${fmtCost(e.cost_usd)}`);
          break;
        case 'repair':
          this.log(id, `repair ${e.repair} (${e.tool}): ${e.detail}`);
          break;
        case 'compaction':
          this.log(id, `compaction of ${e.session}: ${e.reason}`);
          break;
        case 'journal_recovered':
          this.log(id, `${e.session}: ${e.message}`);
          break;
        case 'error':
          if (!$('g-reason').textContent.includes(e.error || '')) $('g-reason').textContent = `stopped by an error: ${e.error || ''}`;
          this.log(id, 'error: ' + this.brief(e.error || ''));
          break;
        case 'cache':
          break;
        default:
          this.log(id, kind);
      }
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

    onStream(e) {
      const s = e.event || {};
      const p = this.paneFor(e);
      if (s.kind === 'reasoning_delta') p.append('reasoning', s.text);
      else if (s.kind === 'content_delta') p.append('content', s.text);
      else if (s.kind === 'stream_restarted') p.line('tool err', `stream restarted${s.reason ? ': ' + s.reason : ''}`);
    }

    addRequest(e) {
      const u = e.usage || {};
      const hit = u.prompt_cache_hit_tokens || 0, miss = u.prompt_cache_miss_tokens || 0;
      this.cost += e.cost_usd || 0;
      this.hit += hit;
      this.prompt += u.prompt_tokens || hit + miss;
      const pro = /pro/.test(e.model || '');
      this.requests.push({ session: e.session, model: e.model, hit, miss, cost: e.cost_usd || 0, cumCost: this.cost, pro });
      const esc = this.escalations.find((x) => x.session === e.session && x.to === e.model && x.open);
      if (esc) { esc.proCost += e.cost_usd || 0; esc.render(); }
      if (!this.summary) this.setFigures(this.cost, this.requests.length, this.prompt ? this.hit / this.prompt : null);
      this.renderChart();
    }

    renderChart() {
      if (this.chartPending) return;
      this.chartPending = true;
      requestAnimationFrame(() => { this.chartPending = false; if (view === this) drawChart($('chart'), this.requests); });
    }

    addEscalation(e) {
      const list = $('escalations');
      if (this.escalations.length === 0) clear(list);
      for (const x of this.escalations) if (x.session === e.session) x.open = false;
      const item = el('li', { class: 'esc' });
      const step = e.step_id || (e.session === 'executor' ? this.currentStep : null);
      const entry = {
        session: e.session, to: e.to_model, open: true, proCost: 0,
        render: () => {
          clear(item);
          item.append(
            el('div', { class: 'what', text: `${e.session}: ${e.from_model} → ${e.to_model} (${e.trigger})${step ? ' on ' + step : ''}` }),
            el('div', { class: 'reason', text: `reason: ${e.reason || '(none given)'}` }),
            el('div', { class: 'muted', text: `aborted flash call ${fmtCost(e.flash_cost_usd)}${e.flash_cost_estimated ? ' (estimated)' : ''} · ${e.to_model} requests so far ${fmtCost(entry.proCost)}` }));
        },
      };
      entry.render();
      this.escalations.push(entry);
      list.append(item);
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

    // one step in full, as the terminal's review shows it: what it will do, how it is accepted and verified
    showStep(stepId) {
      const s = this.plan && (this.plan.steps || []).find((x) => x.id === stepId);
      const box = $('step-detail');
      clear(box);
      if (!s) { box.hidden = true; this.shownStep = null; return; }
      this.shownStep = stepId;
      const status = this.statuses.get(s.id) || s.status || 'pending';
      const rows = [
        ['after', (s.depends_on || []).join(', ')],
        ['reads', (s.reads || []).join(', ')],
        ['writes', (s.writes || []).join(', ')],
        ['risk', s.risk && s.risk !== 'low' ? s.risk : ''],
        ['result', s.result || ''],
      ];
      box.append(
        el('h4', {}, el('span', { class: 'mono', text: s.id }), ` ${s.title || ''} `, el('span', { class: `st st-${status}`, text: status }),
          el('button', { type: 'button', class: 'close', id: 'step-close', text: 'Close' })),
        el('p', { class: 'instructions', text: s.instructions || '' }));
      const dl = el('dl', {});
      for (const [name, value] of rows) if (value) dl.append(el('dt', { text: name }), el('dd', { text: value }));
      box.append(dl);
      if ((s.acceptance || []).length) box.append(el('h5', { text: 'acceptance' }), el('ul', {}, ...s.acceptance.map((a) => el('li', { text: a }))));
      if ((s.verify || []).length) {
        box.append(el('h5', { text: 'verify' }), el('ul', { class: 'mono' }, ...s.verify.map((v) => el('li', { text: verifyText(v) }))));
      }
      box.hidden = false;
      $('step-close').addEventListener('click', () => { this.shownStep = null; box.hidden = true; });
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
        if (view === this) reportError(err);
        return;
      }
      if (view !== this) return;
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

  class Pane {
    constructor(title, key) {
      this.key = key;
      this.model = el('span', { class: 'model' });
      this.body = el('div', { class: 'body' });
      this.pre = el('pre', {});
      this.body.append(this.pre);
      this.root = el('section', { class: 'stream', 'data-pane': key }, el('header', {}, el('span', { text: title }), this.model), this.body);
      this.segment = null;
      this.segmentKind = null;
      this.chars = 0;
    }
    setModel(model) { this.model.textContent = model || ''; }
    setActive(active) { this.root.classList.toggle('active', !!active); }
    append(kind, text) {
      if (!text) return;
      const stick = this.atBottom();
      if (this.segmentKind !== kind || !this.segment) {
        const span = el('span', { class: kind });
        this.segment = document.createTextNode('');
        span.append(this.segment);
        this.pre.append(span);
        this.segmentKind = kind;
      }
      this.segment.appendData(text);
      this.grow(text.length, stick);
    }
    breakSegment() {
      if (this.segment && this.segment.length > 0 && !/\n$/.test(this.segment.data)) this.segment.appendData('\n');
      this.segment = null;
      this.segmentKind = null;
    }
    line(kind, text) {
      const stick = this.atBottom();
      const prefix = this.pre.lastChild && this.segmentKind ? '\n' : '';
      this.pre.append(el('span', { class: kind, text: prefix + text + '\n' }));
      this.segment = null;
      this.segmentKind = null;
      this.grow(text.length + 1, stick);
    }
    grow(n, stick) {
      this.chars += n;
      while (this.chars > PANE_CHARS && this.pre.firstChild) {
        this.chars -= (this.pre.firstChild.textContent || '').length;
        this.pre.removeChild(this.pre.firstChild);
      }
      if (stick) this.body.scrollTop = this.body.scrollHeight;
    }
    atBottom() { return this.body.scrollHeight - this.body.scrollTop - this.body.clientHeight < 30; }
  }

  function setConn(state, text) {
    const c = $('conn');
    c.dataset.state = state;
    c.textContent = text;
  }

  // ------------------------------------------------------------------ actions
  async function review(decision, extra) {
    if (!view) return;
    const box = $('r-error');
    box.hidden = true;
    const buttons = document.querySelectorAll('#review button');
    buttons.forEach((b) => { b.disabled = true; });
    try {
      await api(`/api/runs/${encodeURIComponent(view.runId)}/review`, { method: 'POST', body: { decision, ...extra } });
      view.planEdited = false;
      $('review').hidden = true;
      view.scheduleDetail();
    } catch (err) {
      box.textContent = err.hint ? `${err.message}\n${err.hint}` : err.message;
      box.hidden = false;
      if (err.status === 401) reportError(err);
    } finally {
      buttons.forEach((b) => { b.disabled = false; });
    }
  }

  function wire() {
    $('r-approve').addEventListener('click', () => review('approve', {}));
    $('r-cancel').addEventListener('click', () => review('cancel', {}));
    $('r-revise').addEventListener('click', () => {
      const feedback = $('r-feedback').value.trim();
      if (!feedback) { $('r-error').textContent = 'Write what the planner should change, then press “Revise with feedback”.'; $('r-error').hidden = false; return; }
      review('revise', { feedback });
    });
    $('r-plan').addEventListener('input', () => { if (view) view.planEdited = true; });
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
    $('g-pause').addEventListener('click', async () => {
      try { await api(`/api/runs/${encodeURIComponent(view.runId)}/pause`, { method: 'POST', body: {} }); view.scheduleDetail(); } catch (err) { reportError(err); }
    });
    $('g-resume').addEventListener('click', async () => {
      const budget = parseFloat($('g-resume-budget').value);
      const body = Number.isFinite(budget) && budget > 0 ? { budget_usd: budget } : {};
      try {
        await api(`/api/runs/${encodeURIComponent(view.runId)}/resume`, { method: 'POST', body });
        openRun(view.runId, true);
      } catch (err) { reportError(err); }
    });
    $('g-undo').addEventListener('click', async () => {
      if (!view) return;
      try {
        const result = await api(`/api/runs/${encodeURIComponent(view.runId)}/undo`, { method: 'POST', body: {} });
        const restored = result.restored || [], kept = result.kept || [];
        $('g-hint').textContent = (restored.length ? `undone: ${restored.join(', ')} put back` : 'undone: nothing to put back') +
          (kept.length ? `; kept as you changed them: ${kept.join(', ')}` : '');
        refreshRuns();
      } catch (err) { reportError(err); }
    });
    $('error').addEventListener('click', () => { if (errorKind !== 'token') clearError(); });
    $('new-goal-btn').addEventListener('click', () => { location.hash = '#new'; });
    $('f-close').addEventListener('click', () => { location.hash = view ? '#run=' + encodeURIComponent(view.runId) : ''; });
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

  function openRun(runId, force) {
    if (view && view.runId === runId && !force) return;
    if (view) view.close();
    view = new RunView(runId);
    $('goal').hidden = false;
    $('new-goal').hidden = true;
    renderRuns();
    view.start();
  }

  function route() {
    const hash = location.hash.slice(1);
    if (hash === 'new') {
      $('new-goal').hidden = false;
      $('goal').hidden = !view;
      $('f-workspace').focus();
      return;
    }
    $('new-goal').hidden = true;
    const m = /^run=(.+)$/.exec(hash);
    if (m) openRun(decodeURIComponent(m[1]), false);
  }

  // ------------------------------------------------------------------ start
  wire();
  if (!TOKEN) {
    showError(NEEDS_TOKEN, '', 'token');
    return;
  }
  refreshRuns().then(() => {
    if (!location.hash && knownRuns.length > 0) location.hash = '#run=' + encodeURIComponent(knownRuns[0].run_id);
    else if (!location.hash) location.hash = '#new';
    else route();
  });
  runsTimer = setInterval(refreshRuns, 2500);
  setInterval(() => { // a live run's duration goes on between two polls
    const d = view && view.duration;
    if (d && d.live && view.live) $('g-duration').textContent = fmtDuration(d.seconds + (performance.now() - d.at) / 1000);
  }, 1000);
})();
